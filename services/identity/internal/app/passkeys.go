package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
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

// relyingParty is the deployment's WebAuthn relying party: its id is the public URL's host (a
// passkey is bound to it), its one origin the public URL's, which the hosted pages and the
// console share; name is what the browser's prompt shows (the app's, or the console's).
func (s *Service) relyingParty(name string) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(s.publicURL)
	if s.publicURL == "" || err != nil || u.Hostname() == "" {
		return nil, fault.Unavailable(0, "passkeys need the deployment's public URL")
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		// Browsers and the library refuse an IP address as the relying party's id.
		return nil, fault.Unavailable(0, "passkeys need a public URL with a host name, not an IP address")
	}
	timeout := webauthn.TimeoutConfig{Enforce: true, Timeout: passkeyTimeout, TimeoutUVD: passkeyTimeout}
	return webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: name, RPOrigins: []string{u.Scheme + "://" + u.Host},
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
}

// passkeyHolder is a person as the WebAuthn library sees them, with the passkeys they hold: a
// user of an app (userHolder) or a console member account (memberHolder). Every ceremony of
// either runs through the functions below, so both follow one set of rules.
type passkeyHolder struct {
	id, name, display string
	creds             []webauthn.Credential
	keys              []domain.Factor // the factor of each credential
}

func (p passkeyHolder) WebAuthnID() []byte                         { return []byte(p.id) }
func (p passkeyHolder) WebAuthnName() string                       { return p.name }
func (p passkeyHolder) WebAuthnDisplayName() string                { return p.display }
func (p passkeyHolder) WebAuthnCredentials() []webauthn.Credential { return p.creds }

func userHolder(u domain.User) passkeyHolder {
	return passkeyHolder{id: u.ID, name: u.Email, display: firstOf(u.Name, u.Email)}
}

// withPasskeys is h holding the confirmed passkeys among factors, opened.
func (s *Service) withPasskeys(h passkeyHolder, factors []domain.Factor) (passkeyHolder, error) {
	for _, f := range factors {
		if f.Kind != domain.FactorPasskey || !f.Confirmed() {
			continue
		}
		raw, err := s.box.Open(f.SealedSecret, f.ID)
		if err != nil {
			return passkeyHolder{}, fmt.Errorf("open passkey %s: %w", f.ID, err)
		}
		var c webauthn.Credential
		if err := json.Unmarshal(raw, &c); err != nil {
			return passkeyHolder{}, fmt.Errorf("decode passkey %s: %w", f.ID, err)
		}
		h.creds, h.keys = append(h.creds, c), append(h.keys, f)
	}
	return h, nil
}

// passkeysOf opens the user's confirmed passkeys.
func (s *Service) passkeysOf(ctx context.Context, a domain.App, u domain.User) (passkeyHolder, error) {
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return passkeyHolder{}, err
	}
	return s.withPasskeys(userHolder(u), factors)
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
// sealed under aad.
func (s *Service) beginPasskeyRegistration(ctx context.Context, a domain.App, u domain.User, aad string) (PasskeyCeremony, error) {
	if a.MFA == domain.MFAOff {
		return PasskeyCeremony{}, errMFAOff
	}
	rp, err := s.relyingParty(appLabel(a))
	if err != nil {
		return PasskeyCeremony{}, err
	}
	h, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	return s.beginRegistration(rp, h, aad)
}

// beginRegistration answers the options of navigator.credentials.create for h, its state sealed
// under aad. Passkeys h holds are excluded, so an authenticator is not registered twice.
func (s *Service) beginRegistration(rp *webauthn.WebAuthn, h passkeyHolder, aad string) (PasskeyCeremony, error) {
	exclude := make([]protocol.CredentialDescriptor, 0, len(h.creds))
	for _, c := range h.creds {
		exclude = append(exclude, c.Descriptor())
	}
	creation, session, err := rp.BeginRegistration(h, webauthn.WithExclusions(exclude),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementPreferred, UserVerification: protocol.VerificationPreferred,
		}))
	if err != nil {
		return PasskeyCeremony{}, fmt.Errorf("begin passkey registration: %w", err)
	}
	return s.sealCeremony(creation.Response, session, aad)
}

// createPasskey verifies the credential the browser created for h in the ceremony sealed under
// aad and answers it as a new passkey factor of userID (appID "" for a member account), sealed,
// not yet confirmed or stored. A credential that cannot be verified, or one h holds already, is
// errPasskey.
func (s *Service) createPasskey(rp *webauthn.WebAuthn, h passkeyHolder, appID, userID, credential, state, aad string) (domain.Factor, error) {
	session, err := s.openCeremony(state, aad)
	if err != nil || len(credential) > maxPasskeyJSON {
		return domain.Factor{}, errPasskey
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(credential))
	if err != nil {
		return domain.Factor{}, errPasskey
	}
	cred, err := rp.CreateCredential(h, session, parsed)
	if err != nil {
		return domain.Factor{}, errPasskey
	}
	for _, c := range h.creds {
		if bytes.Equal(c.ID, cred.ID) {
			return domain.Factor{}, errPasskey // the same authenticator again
		}
	}
	f := domain.Factor{ID: uuid.NewString(), AppID: appID, UserID: userID, Kind: domain.FactorPasskey, CreatedAt: s.now(), LastStep: int64(cred.Authenticator.SignCount)}
	raw, err := json.Marshal(cred)
	if err != nil {
		return domain.Factor{}, err
	}
	if f.SealedSecret, err = s.box.Seal(raw, f.ID); err != nil {
		return domain.Factor{}, err
	}
	return f, nil
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
	rp, err := s.relyingParty(appLabel(a))
	if err != nil {
		return nil, err
	}
	h, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return nil, err
	}
	f, err := s.createPasskey(rp, h, a.ID, u.ID, credential, state, aad)
	if err != nil {
		return nil, err
	}
	var plain []string
	var stored []domain.RecoveryCode
	if left, err := s.store.CountRecoveryCodes(ctx, a.ID, u.ID); err != nil {
		return nil, err
	} else if left == 0 {
		if plain, stored, err = domain.NewRecoveryCodes(a.ID, u.ID, f.CreatedAt, s.pepper); err != nil {
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
	if err := s.store.ConfirmFactor(ctx, a.ID, u.ID, f.ID, f.LastStep, f.CreatedAt, stored, evs...); err != nil {
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
	h, err := s.passkeysOf(ctx, a, u)
	if err != nil || len(h.creds) == 0 {
		return PasskeyCeremony{}, err
	}
	rp, err := s.relyingParty(appLabel(a))
	if err != nil {
		return PasskeyCeremony{}, err
	}
	return s.beginAssertion(rp, h, assertionAAD(c))
}

// beginAssertion answers the options of navigator.credentials.get for h's passkeys, its state
// sealed under aad.
func (s *Service) beginAssertion(rp *webauthn.WebAuthn, h passkeyHolder, aad string) (PasskeyCeremony, error) {
	assertion, session, err := rp.BeginLogin(h, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return PasskeyCeremony{}, fmt.Errorf("begin passkey assertion: %w", err)
	}
	return s.sealCeremony(assertion.Response, session, aad)
}

// checkPasskey reports whether the assertion proves one of the user's passkeys in the ceremony
// sealed under aad (a sign-in's second step, a link confirmation), and records its signature
// counter (useCounter).
func (s *Service) checkPasskey(ctx context.Context, aad string, a domain.App, u domain.User, assertion, state string) (bool, error) {
	rp, err := s.relyingParty(appLabel(a))
	if err != nil {
		return false, err
	}
	h, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return false, err
	}
	cred, ok := s.validateAssertion(rp, h, assertion, state, aad)
	if !ok {
		return false, nil
	}
	return s.useCounter(ctx, a, u, h, cred)
}

// validateAssertion checks the assertion against h's passkeys in the ceremony sealed under aad
// and answers the credential it proved. An assertion that cannot be verified (another ceremony's,
// a foreign credential, an expired or tampered state) is not ok.
func (s *Service) validateAssertion(rp *webauthn.WebAuthn, h passkeyHolder, assertion, state, aad string) (*webauthn.Credential, bool) {
	session, err := s.openCeremony(state, aad)
	if err != nil || len(assertion) > maxPasskeyJSON {
		return nil, false
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(assertion))
	if err != nil {
		return nil, false
	}
	cred, err := rp.ValidateLogin(h, session, parsed)
	return cred, err == nil
}

// provedKey is the factor of h's passkey that a verified assertion proved, unless the library saw
// its counter fall behind the one registered (a cloned authenticator).
func provedKey(h passkeyHolder, cred *webauthn.Credential) (domain.Factor, bool) {
	if cred.Authenticator.CloneWarning {
		return domain.Factor{}, false
	}
	for i, known := range h.creds {
		if bytes.Equal(known.ID, cred.ID) {
			return h.keys[i], true
		}
	}
	return domain.Factor{}, false
}

// useCounter records the signature counter of a verified assertion of one of h's passkeys: a
// counter that did not rise (a cloned authenticator, or a replay) is refused, unless the
// authenticator keeps none.
func (s *Service) useCounter(ctx context.Context, a domain.App, u domain.User, h passkeyHolder, cred *webauthn.Credential) (bool, error) {
	key, ok := provedKey(h, cred)
	if !ok {
		return false, nil
	}
	if cred.Authenticator.SignCount == 0 && key.LastStep == 0 {
		return true, nil // an authenticator without a counter
	}
	err := s.store.UseFactorStep(ctx, a.ID, u.ID, key.ID, int64(cred.Authenticator.SignCount))
	if errors.Is(err, domain.ErrCodeReplayed) {
		return false, nil
	}
	return err == nil, err
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
	rp, err := s.relyingParty(appLabel(a))
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
		user  domain.User
		found passkeyHolder
	)
	// The credential's user handle is the user's id (passkeyHolder.WebAuthnID) in this app.
	handler := func(_, userHandle []byte) (webauthn.User, error) {
		id := domain.CanonicalID(string(userHandle))
		if !domain.IsUUID(id) {
			return nil, errPasskey
		}
		u, err := s.store.GetUser(ctx, a.ID, id)
		if err != nil {
			return nil, err
		}
		user = u
		found, err = s.passkeysOf(ctx, a, u)
		return found, err
	}
	cred, err := rp.ValidateDiscoverableLogin(handler, session, parsed)
	if err != nil {
		return domain.User{}, false, nil
	}
	ok, err := s.useCounter(ctx, a, user, found, cred)
	return user, ok, err
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
