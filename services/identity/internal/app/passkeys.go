package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// passkeyTimeout is how long a passkey ceremony may take: the browser's prompt and the page's
// post back. A ceremony's state older than this is refused.
const passkeyTimeout = 5 * time.Minute

// maxPasskeyJSON bounds the credential JSON a page posts; real ones are a few kilobytes.
const maxPasskeyJSON = 64 << 10

// errPasskey answers every passkey that cannot be used: a bad or replayed assertion, a foreign or
// unknown credential, an expired ceremony. The page asks again.
var errPasskey = fault.Invalid("passkey", "this passkey could not be verified")

// relyingParty is the deployment's WebAuthn relying party for a: its id is the public URL's host
// (a passkey is bound to it), its one origin the public URL's; the app's name is what the
// browser's prompt shows.
func (s *Service) relyingParty(a domain.App) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(s.publicURL)
	if s.publicURL == "" || err != nil || u.Hostname() == "" {
		return nil, fault.Unavailable(0, "passkeys need the deployment's public URL")
	}
	timeout := webauthn.TimeoutConfig{Enforce: true, Timeout: passkeyTimeout, TimeoutUVD: passkeyTimeout}
	return webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: appLabel(a), RPOrigins: []string{u.Scheme + "://" + u.Host},
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
}

// passkeyUser is a user as the WebAuthn library sees it, with the passkeys it holds.
type passkeyUser struct {
	u     domain.User
	creds []webauthn.Credential
	ids   []string // the factor id of each credential
}

func (p passkeyUser) WebAuthnID() []byte                         { return []byte(p.u.ID) }
func (p passkeyUser) WebAuthnName() string                       { return p.u.Email }
func (p passkeyUser) WebAuthnDisplayName() string                { return firstOf(p.u.Name, p.u.Email) }
func (p passkeyUser) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// passkeysOf opens the user's confirmed passkeys.
func (s *Service) passkeysOf(ctx context.Context, a domain.App, u domain.User) (passkeyUser, []domain.Factor, error) {
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return passkeyUser{}, nil, err
	}
	pu := passkeyUser{u: u}
	var keys []domain.Factor
	for _, f := range factors {
		if f.Kind != domain.FactorPasskey || !f.Confirmed() {
			continue
		}
		raw, err := s.box.Open(f.SealedSecret, f.ID)
		if err != nil {
			return passkeyUser{}, nil, fmt.Errorf("open passkey %s: %w", f.ID, err)
		}
		var c webauthn.Credential
		if err := json.Unmarshal(raw, &c); err != nil {
			return passkeyUser{}, nil, fmt.Errorf("decode passkey %s: %w", f.ID, err)
		}
		pu.creds, pu.ids, keys = append(pu.creds, c), append(pu.ids, f.ID), append(keys, f)
	}
	return pu, keys, nil
}

// PasskeyCeremony is a WebAuthn ceremony for the page: the options' JSON and the sealed state it
// posts back. The state is the library's session data sealed under its purpose and subject, so a
// page can neither read nor change it nor move it to another user or sign-in.
type PasskeyCeremony struct {
	Options, State string
}

func (s *Service) sealCeremony(options any, session *webauthn.SessionData, aad string) (PasskeyCeremony, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	raw, err := json.Marshal(session)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	sealed, err := s.box.Seal(raw, aad)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	return PasskeyCeremony{Options: string(opts), State: base64.RawURLEncoding.EncodeToString(sealed)}, nil
}

func (s *Service) openCeremony(state, aad string) (webauthn.SessionData, error) {
	sealed, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(state) > maxPasskeyJSON {
		return webauthn.SessionData{}, errPasskey
	}
	raw, err := s.box.Open(sealed, aad)
	if err != nil {
		return webauthn.SessionData{}, errPasskey
	}
	var session webauthn.SessionData
	if err := json.Unmarshal(raw, &session); err != nil {
		return webauthn.SessionData{}, errPasskey
	}
	return session, nil
}

// StartPasskeyRegistration begins adding a passkey for the token's user.
func (s *Service) StartPasskeyRegistration(ctx context.Context, accessToken string) (PasskeyCeremony, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	return s.beginPasskeyRegistration(ctx, a, u, registrationAAD(u))
}

// registrationAAD binds a registration ceremony of the account page to its user; enrolmentAAD
// binds one of a sign-in that must enrol to that sign-in's flow.
func registrationAAD(u domain.User) string   { return "passkey registration\x00" + u.ID }
func enrolmentAAD(c domain.Challenge) string { return "passkey enrolment\x00" + c.ID }
func assertionAAD(c domain.Challenge) string { return "passkey assertion\x00" + c.ID }

// beginPasskeyRegistration answers the options of navigator.credentials.create for u, its state
// sealed under aad. Passkeys the user holds are excluded, so an authenticator is not registered
// twice.
func (s *Service) beginPasskeyRegistration(ctx context.Context, a domain.App, u domain.User, aad string) (PasskeyCeremony, error) {
	if a.MFA == domain.MFAOff {
		return PasskeyCeremony{}, errMFAOff
	}
	rp, err := s.relyingParty(a)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	pu, _, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	exclude := make([]protocol.CredentialDescriptor, 0, len(pu.creds))
	for _, c := range pu.creds {
		exclude = append(exclude, c.Descriptor())
	}
	creation, session, err := rp.BeginRegistration(pu, webauthn.WithExclusions(exclude),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementPreferred, UserVerification: protocol.VerificationPreferred,
		}))
	if err != nil {
		return PasskeyCeremony{}, fmt.Errorf("begin passkey registration: %w", err)
	}
	return s.sealCeremony(creation.Response, session, aad)
}

// PasskeyRegistration is the account page's created passkey with the current password, which is
// asked again as for an authenticator app.
type PasskeyRegistration struct {
	AccessToken, Credential, State string
	Current, ClientIP              string
}

// FinishPasskeyRegistration verifies the current password and the credential the browser created
// and stores it as a confirmed factor; a user who had no recovery codes gets them now (answered
// once).
func (s *Service) FinishPasskeyRegistration(ctx context.Context, in PasskeyRegistration) ([]string, error) {
	a, u, err := s.accountUser(ctx, in.AccessToken)
	if err != nil {
		return nil, err
	}
	if a.MFA == domain.MFAOff {
		return nil, errMFAOff
	}
	if err := s.checkCurrentPassword(ctx, u, in.Current, in.ClientIP); err != nil {
		return nil, err
	}
	return s.registerPasskey(ctx, a, u, in.Credential, in.State, registrationAAD(u))
}

// registerPasskey verifies the credential the browser created in the ceremony sealed under aad
// and stores it as a confirmed factor of u, with the enrolled event; a user who had no recovery
// codes gets them now (answered once). A credential that cannot be verified is errPasskey.
func (s *Service) registerPasskey(ctx context.Context, a domain.App, u domain.User, credential, state, aad string) ([]string, error) {
	rp, err := s.relyingParty(a)
	if err != nil {
		return nil, err
	}
	session, err := s.openCeremony(state, aad)
	if err != nil || len(credential) > maxPasskeyJSON {
		return nil, errPasskey
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(credential))
	if err != nil {
		return nil, errPasskey
	}
	pu, _, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return nil, err
	}
	cred, err := rp.CreateCredential(pu, session, parsed)
	if err != nil {
		return nil, errPasskey
	}
	for _, c := range pu.creds {
		if bytes.Equal(c.ID, cred.ID) {
			return nil, errPasskey // the same authenticator again
		}
	}
	now := s.now()
	f := domain.Factor{ID: uuid.NewString(), AppID: a.ID, UserID: u.ID, Kind: domain.FactorPasskey, CreatedAt: now, LastStep: int64(cred.Authenticator.SignCount)}
	raw, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	if f.SealedSecret, err = s.box.Seal(raw, f.ID); err != nil {
		return nil, err
	}
	var plain []string
	var stored []domain.RecoveryCode
	if left, err := s.store.CountRecoveryCodes(ctx, a.ID, u.ID); err != nil {
		return nil, err
	} else if left == 0 {
		if plain, stored, err = domain.NewRecoveryCodes(a.ID, u.ID, now, s.pepper); err != nil {
			return nil, err
		}
	}
	evs, err := event(identityv1.EventSecondFactorEnrolled, a.ID, &identityv1.SecondFactorChanged{
		AppId: a.ID, UserId: u.ID, Kinds: []string{string(domain.FactorPasskey)},
	})
	if err != nil {
		return nil, err
	}
	if err := s.store.SavePendingFactor(ctx, f); err != nil {
		return nil, err
	}
	if err := s.store.ConfirmFactor(ctx, a.ID, u.ID, f.ID, f.LastStep, now, stored, evs...); err != nil {
		return nil, err
	}
	return plain, nil
}

// StartPasskeyAssertion answers the options of a sign-in's second step for the user's passkeys,
// or an empty ceremony when the user has none.
func (s *Service) StartPasskeyAssertion(ctx context.Context, flow string) (PasskeyCeremony, error) {
	c, a, u, err := s.flowOf(ctx, flow)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	pu, _, err := s.passkeysOf(ctx, a, u)
	if err != nil || len(pu.creds) == 0 {
		return PasskeyCeremony{}, err
	}
	rp, err := s.relyingParty(a)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	assertion, session, err := rp.BeginLogin(pu, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return PasskeyCeremony{}, fmt.Errorf("begin passkey assertion: %w", err)
	}
	return s.sealCeremony(assertion.Response, session, assertionAAD(c))
}

// checkPasskey reports whether the assertion proves one of the user's passkeys in the ceremony
// sealed under aad (a sign-in's second step, a link confirmation), and records its signature
// counter: a counter that did not rise (a cloned authenticator, or a replay) is refused unless
// the authenticator keeps none.
func (s *Service) checkPasskey(ctx context.Context, aad string, a domain.App, u domain.User, assertion, state string) (bool, error) {
	session, err := s.openCeremony(state, aad)
	if err != nil || len(assertion) > maxPasskeyJSON {
		return false, nil
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(assertion))
	if err != nil {
		return false, nil
	}
	rp, err := s.relyingParty(a)
	if err != nil {
		return false, err
	}
	pu, keys, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return false, err
	}
	cred, err := rp.ValidateLogin(pu, session, parsed)
	if err != nil {
		return false, nil
	}
	return s.useCounter(ctx, a, u, pu, keys, cred)
}

// useCounter records the signature counter of a verified assertion of one of pu's passkeys: a
// counter that did not rise (a cloned authenticator, or a replay) is refused, unless the
// authenticator keeps none.
func (s *Service) useCounter(ctx context.Context, a domain.App, u domain.User, pu passkeyUser, keys []domain.Factor, cred *webauthn.Credential) (bool, error) {
	if cred.Authenticator.CloneWarning {
		return false, nil
	}
	for i, known := range pu.creds {
		if !bytes.Equal(known.ID, cred.ID) {
			continue
		}
		if cred.Authenticator.SignCount == 0 && keys[i].LastStep == 0 {
			return true, nil // an authenticator without a counter
		}
		err := s.store.UseFactorStep(ctx, a.ID, u.ID, pu.ids[i], int64(cred.Authenticator.SignCount))
		if errors.Is(err, domain.ErrCodeReplayed) {
			return false, nil
		}
		return err == nil, err
	}
	return false, nil
}

// passkeySignInApp is the app of a passkey sign-in's request: enabled, allowing it, and able to
// run WebAuthn.
func (s *Service) passkeySignInApp(ctx context.Context, p LoginParams) (domain.App, *webauthn.WebAuthn, error) {
	a, err := s.enabledLoginApp(ctx, p)
	if err != nil {
		return domain.App{}, nil, err
	}
	if !a.PasskeySignIn || a.MFA == domain.MFAOff {
		return domain.App{}, nil, fault.Precondition("this app does not offer passkey sign-in")
	}
	rp, err := s.relyingParty(a)
	return a, rp, err
}

// OffersPasskeySignIn reports whether the sign-in page of a offers passkeys.
func (s *Service) OffersPasskeySignIn(a domain.App) bool {
	return a.PasskeySignIn && a.MFA != domain.MFAOff && s.publicURL != ""
}

// StartPasskeySignIn answers the options of a passkey sign-in: any passkey of the app's users
// (a discoverable credential names its user), verified by the device's screen lock.
func (s *Service) StartPasskeySignIn(ctx context.Context, p LoginParams) (PasskeyCeremony, error) {
	a, rp, err := s.passkeySignInApp(ctx, p)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	assertion, session, err := rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return PasskeyCeremony{}, fmt.Errorf("begin passkey sign-in: %w", err)
	}
	return s.sealCeremony(assertion.Response, session, "passkey sign-in\x00"+a.ID)
}

// PasskeySignInInput is the sign-in page's passkey form.
type PasskeySignInInput struct {
	Params              LoginParams
	Passkey, State      string
	ClientIP, UserAgent string
}

// PasskeySignIn signs in with a passkey instead of the password. The passkey, verified by the
// device's screen lock (user verification is required), proves two factors: the sign-in needs
// no second step and its tokens say amr ["hwk", "mfa"]. A passkey that cannot be verified counts
// as a failed sign-in of the client address.
func (s *Service) PasskeySignIn(ctx context.Context, in PasskeySignInInput) (LoginOutcome, error) {
	a, rp, err := s.passkeySignInApp(ctx, in.Params)
	if err != nil {
		return LoginOutcome{}, err
	}
	if err := domain.CheckUserAgent(in.UserAgent); err != nil {
		return LoginOutcome{}, err
	}
	ip := clientIP(in.ClientIP)
	var limits []limit
	if address := addressKey(ip); address != "" {
		limits = append(limits, newLimit("ip:"+address, s.limits.PerIP, s.limits.Window, s.now(), errTooMany))
	}
	attempt, err := s.reserve(ctx, limits...)
	if err != nil {
		return LoginOutcome{}, err
	}
	u, ok, err := s.verifyPasskeySignIn(ctx, a, rp, in)
	if err != nil {
		s.release(ctx, attempt)
		return LoginOutcome{}, err
	}
	if !ok {
		return LoginOutcome{}, errPasskey
	}
	s.release(ctx, attempt)
	if err := inactive(u); err != nil {
		return LoginOutcome{}, err
	}
	if verificationRequired(a) && !u.EmailVerified {
		return s.signInUnverified(ctx, a, u, in.Params, ip)
	}
	target, err := s.completeSignIn(ctx, a, u, in.Params, browser{ip: ip, userAgent: in.UserAgent},
		[]string{domain.AMRHardwareKey, domain.AMRMulti})
	return LoginOutcome{URL: target}, err
}

// verifyPasskeySignIn checks the assertion against the passkeys of the user its credential names.
func (s *Service) verifyPasskeySignIn(ctx context.Context, a domain.App, rp *webauthn.WebAuthn, in PasskeySignInInput) (domain.User, bool, error) {
	session, err := s.openCeremony(in.State, "passkey sign-in\x00"+a.ID)
	if err != nil || len(in.Passkey) > maxPasskeyJSON {
		return domain.User{}, false, nil
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(in.Passkey))
	if err != nil {
		return domain.User{}, false, nil
	}
	var (
		found passkeyUser
		keys  []domain.Factor
	)
	// The credential's user handle is the user's id (passkeyUser.WebAuthnID) in this app.
	handler := func(_, userHandle []byte) (webauthn.User, error) {
		id := domain.CanonicalID(string(userHandle))
		if !domain.IsUUID(id) {
			return nil, errPasskey
		}
		u, err := s.store.GetUser(ctx, a.ID, id)
		if err != nil {
			return nil, err
		}
		found, keys, err = s.passkeysOf(ctx, a, u)
		return found, err
	}
	cred, err := rp.ValidateDiscoverableLogin(handler, session, parsed)
	if err != nil {
		return domain.User{}, false, nil
	}
	ok, err := s.useCounter(ctx, a, found.u, found, keys, cred)
	return found.u, ok, err
}

// countPasskeys is how many confirmed passkeys factors holds.
func countPasskeys(factors []domain.Factor) int {
	n := 0
	for _, f := range factors {
		if f.Kind == domain.FactorPasskey && f.Confirmed() {
			n++
		}
	}
	return n
}
