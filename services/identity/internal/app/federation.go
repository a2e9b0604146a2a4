package app

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// ProviderCallbackPath is where identity providers send the browser back, on the deployment's
// public URL: the hosted login page's callback, which every slot's client registers.
const ProviderCallbackPath = "/login/idp/callback"

// providerFlowTTL bounds a provider sign-in from the button to the callback, and a pending link
// from the callback to the password that confirms it: long enough for a consent screen and a
// password manager, short enough that a flow left in a shared browser soon dies.
const providerFlowTTL = 10 * time.Minute

// The sealbox owners of the sealed flow and the sealed pending link: neither opens as the other.
const (
	flowOwner = "idp/flow"
	linkOwner = "idp/link"
)

// The reasons of a refused provider sign-in (fault reasons on the field "provider"); the hosted
// page shows one fixed text per reason and logs the message, which says why for the developer.
const (
	ProviderReasonState       = "state"       // no flow, a broken or expired one, or a state that is not the flow's
	ProviderReasonDenied      = "denied"      // the person refused consent at the provider
	ProviderReasonError       = "error"       // the provider answered the callback with another error
	ProviderReasonCode        = "code"        // the provider refused the code (expired, used, not its own)
	ProviderReasonUnreachable = "unreachable" // the provider could not be reached or answered nonsense
	ProviderReasonToken       = "token"       // the ID token failed verification (signature, issuer, audience, expiry, nonce)
	ProviderReasonEmail       = "email"       // the provider named no usable email address
	ProviderReasonDomain      = "domain"      // the address's domain may not sign in through this slot
	ProviderReasonTaken       = "taken"       // an unverified address that already has an account: never linked
	ProviderReasonUnverified  = "unverified"  // an unverified address, where the app requires a verified one
	ProviderReasonSlot        = "slot"        // the slot is not configured (any more)
	ProviderReasonLink        = "link"        // a pending link that is broken, expired or for another account
	ProviderReasonLinked      = "linked"      // the provider identity or the account's slot is linked already
)

// ProviderRefusal is a refused provider sign-in: an Invalid fault on the field "provider" with
// its reason (ProviderReason*), whose message says why for the developer's log.
func ProviderRefusal(reason, format string, args ...any) error {
	return fault.InvalidField("provider", format, args...).WithReason(reason)
}

// ProviderClient talks to identity providers (adapters/oidc). Its failures are ProviderRefusals.
type ProviderClient interface {
	// AuthCodeURL answers the provider's authorization URL of the code flow with PKCE (the S256
	// challenge of verifier), state and nonce.
	AuthCodeURL(ctx context.Context, call ProviderCall, state, nonce, verifier string) (string, error)
	// Exchange exchanges the code with the verifier and answers who the verified ID token (issuer,
	// audience, expiry, signature, and nonce) says signed in.
	Exchange(ctx context.Context, call ProviderCall, code, verifier, nonce string) (ProviderIdentity, error)
}

// ProviderCall is one slot's provider and what Berth is to it.
type ProviderCall struct {
	Provider     domain.IdentityProvider
	ClientSecret string // opened from the slot; "" for a public client
	RedirectURI  string // the deployment's ProviderCallbackPath
	Now          func() time.Time
}

// ProviderIdentity is what the provider asserted about the person.
type ProviderIdentity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	GivenName     string
	FamilyName    string
}

// providerFlow is one provider sign-in between the button and the callback, sealed (flowOwner) into
// the cookie the hosted page keeps: nothing about it is stored server-side.
type providerFlow struct {
	AppID    string      `json:"app"`
	Slot     string      `json:"slot"`
	Params   LoginParams `json:"params"`
	State    string      `json:"state"`
	Nonce    string      `json:"nonce"`
	Verifier string      `json:"verifier"`
	Expires  time.Time   `json:"expires"`
	// LinkUser, when set, makes the flow a link from the account page: the callback links the
	// provider identity to this user instead of signing in, and returns to the page in Language.
	LinkUser string `json:"linkUser,omitempty"`
	Language string `json:"language,omitempty"`
}

// pendingLink is a provider identity waiting for the proof that the account it would link to is
// the person's (linkproof.go),
// sealed (linkOwner) into the confirmation form.
type pendingLink struct {
	AppID   string      `json:"app"`
	Slot    string      `json:"slot"`
	Subject string      `json:"sub"`
	UserID  string      `json:"user"`
	Email   string      `json:"email"`
	Params  LoginParams `json:"params"`
	Expires time.Time   `json:"expires"`
	// CodeID is the challenge of the code SendProviderLinkCode mailed for this link: sealed in, so
	// the code confirms only this link.
	CodeID string `json:"code,omitempty"`
}

func (s *Service) seal(v any, owner string) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sealed, err := s.box.Seal(plain, owner)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// open reads a value seal made for owner; anything else (forged, truncated, of the other owner) is
// false.
func (s *Service) open(raw, owner string, v any) bool {
	sealed, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return false
	}
	plain, err := s.box.Open(sealed, owner)
	return err == nil && json.Unmarshal(plain, v) == nil
}

// ProviderStart is where a provider sign-in sends the browser, and the sealed flow the hosted page
// keeps until the callback.
type ProviderStart struct {
	URL, Flow string
}

// StartProviderSignIn begins a sign-in through the app's provider in slot: authorization code flow
// with PKCE (S256), a random state and nonce, all bound to this authorization request in the
// sealed flow.
func (s *Service) StartProviderSignIn(ctx context.Context, p LoginParams, slot string) (ProviderStart, error) {
	a, err := s.enabledLoginApp(ctx, p)
	if err != nil {
		return ProviderStart{}, err
	}
	if s.publicURL == "" || s.providers == nil {
		return ProviderStart{}, fault.Unavailable(0, "sign-in with identity providers needs the deployment's public URL")
	}
	idp, err := s.configuredProvider(ctx, a.ID, slot)
	if err != nil {
		return ProviderStart{}, err
	}
	return s.startFlow(ctx, idp, providerFlow{AppID: a.ID, Slot: idp.Slot, Params: p})
}

// startFlow completes f with a fresh PKCE verifier, state, nonce and expiry, seals it and answers
// the provider's authorization URL: the one flow of a sign-in and of a link from the account page.
func (s *Service) startFlow(ctx context.Context, idp domain.IdentityProvider, f providerFlow) (ProviderStart, error) {
	call, err := s.providerCall(idp)
	if err != nil {
		return ProviderStart{}, err
	}
	f.Expires = s.now().Add(providerFlowTTL)
	if f.Verifier, err = domain.NewPKCEVerifier(); err != nil {
		return ProviderStart{}, err
	}
	if f.State, err = domain.NewState(); err != nil {
		return ProviderStart{}, err
	}
	if f.Nonce, err = domain.NewState(); err != nil {
		return ProviderStart{}, err
	}
	authURL, err := s.providers.AuthCodeURL(ctx, call, f.State, f.Nonce, f.Verifier)
	if err != nil {
		return ProviderStart{}, err
	}
	sealed, err := s.seal(f, flowOwner)
	if err != nil {
		return ProviderStart{}, err
	}
	return ProviderStart{URL: authURL, Flow: sealed}, nil
}

func (s *Service) configuredProvider(ctx context.Context, appID, slot string) (domain.IdentityProvider, error) {
	if !domain.IsProviderSlot(slot) {
		return domain.IdentityProvider{}, domain.ErrBadSlot
	}
	idp, err := s.store.GetIdentityProvider(ctx, appID, slot)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.IdentityProvider{}, ProviderRefusal(ProviderReasonSlot, "slot %s of the app is not configured", slot)
	}
	return idp, err
}

// providerCall opens the slot's client secret for a call to its provider.
func (s *Service) providerCall(idp domain.IdentityProvider) (ProviderCall, error) {
	call := ProviderCall{Provider: idp, RedirectURI: s.publicURL + ProviderCallbackPath, Now: s.clock}
	if len(idp.SealedSecret) > 0 {
		secret, err := s.box.Open(idp.SealedSecret, domain.ProviderSecretOwner(idp.AppID, idp.Slot))
		if err != nil {
			return ProviderCall{}, err
		}
		call.ClientSecret = string(secret)
	}
	return call, nil
}

// ProviderCallback is the provider's answer as the browser brought it back, with the flow the
// hosted page kept.
type ProviderCallback struct {
	Flow, State, Code, Error, ErrorDescription string
	ClientIP, UserAgent                        string
}

// ProviderOutcome is where a provider sign-in leads: the app (URL), or the confirmation of a link to
// an existing account (Link, sealed, with the address and the provider's display name).
type ProviderOutcome struct {
	URL string
	// SecondFactor and Enrol, instead of URL, are a sign-in that needs its second factor, as after
	// a password (LoginOutcome).
	SecondFactor string
	Enrol        bool
	Link         string
	Email        string
	ProviderName string
	Params       LoginParams
}

// FinishProviderSignIn completes a provider sign-in at its callback. The state must be the flow's
// (compared in constant time) and the flow live; the code is exchanged with the PKCE verifier and
// the ID token verified (signature through the provider's JWKS, issuer, audience, expiry, and the
// flow's nonce). Then the linking rules decide (docs/accounts.md):
//   - a linked provider identity signs its user in;
//   - a new address creates the user and its tenant as sign-up does, linked;
//   - an address that has an account is linked only when the provider asserts it verified and the
//     person then proves the account is theirs (the outcome's Link, ConfirmProviderLink); an
//     unverified one is refused and nothing is created.
func (s *Service) FinishProviderSignIn(ctx context.Context, cb ProviderCallback) (ProviderOutcome, error) {
	var f providerFlow
	if !s.open(cb.Flow, flowOwner, &f) {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonState, "the callback carries no flow this deployment sealed")
	}
	if subtle.ConstantTimeCompare([]byte(cb.State), []byte(f.State)) != 1 {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonState, "the callback's state is not its flow's")
	}
	if !s.now().Before(f.Expires) {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonState, "the flow expired")
	}
	switch {
	case cb.Error == "access_denied":
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonDenied, "%s: consent denied at the provider", f.Slot)
	case cb.Error != "":
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonError, "%s answered error %q: %s", f.Slot, cb.Error, cb.ErrorDescription)
	case cb.Code == "":
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonCode, "%s sent no code", f.Slot)
	}
	a, err := s.enabledLoginApp(ctx, f.Params)
	if err != nil {
		return ProviderOutcome{}, err
	}
	if err := domain.CheckUserAgent(cb.UserAgent); err != nil {
		return ProviderOutcome{}, err
	}
	idp, err := s.configuredProvider(ctx, a.ID, f.Slot)
	if err != nil {
		return ProviderOutcome{}, err
	}
	who, err := s.providerIdentity(ctx, idp, f, cb.Code)
	if err != nil {
		return ProviderOutcome{}, err
	}
	b := browser{ip: clientIP(cb.ClientIP), userAgent: cb.UserAgent}
	p := f.Params
	p.Service = idp.Slot
	if who.Email != "" && !idp.AllowsEmail(who.Email) || who.Email == "" && len(idp.AllowedDomains) > 0 {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonDomain, "%s: the address's domain may not sign in through this slot", idp.Slot)
	}
	if f.LinkUser != "" {
		return s.linkFromAccount(ctx, a, idp, who, f)
	}
	link, err := s.store.GetProviderLink(ctx, a.ID, idp.Slot, who.Subject)
	switch {
	case err == nil:
		return s.signInLinked(ctx, a, link, who, p, b)
	case !errors.Is(err, domain.ErrNotFound):
		return ProviderOutcome{}, err
	}
	if !domain.IsEmail(who.Email) {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonEmail, "%s named no usable email address (scope email?)", idp.Slot)
	}
	existing, err := s.store.GetUserByEmail(ctx, a.ID, who.Email)
	switch {
	case err == nil && !existing.Deleted:
		return s.offerLink(a, idp, existing, who, f.Params)
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return ProviderOutcome{}, err
	}
	return s.signUpLinked(ctx, a, idp, who, p, b)
}

// providerIdentity exchanges the code and verifies the ID token through the provider client, and
// keeps of the profile claims what user fields take.
func (s *Service) providerIdentity(ctx context.Context, idp domain.IdentityProvider, f providerFlow, code string) (ProviderIdentity, error) {
	if s.providers == nil {
		return ProviderIdentity{}, fault.Unavailable(0, "sign-in with identity providers is not available")
	}
	call, err := s.providerCall(idp)
	if err != nil {
		return ProviderIdentity{}, err
	}
	who, err := s.providers.Exchange(ctx, call, code, f.Verifier, f.Nonce)
	if err != nil {
		return ProviderIdentity{}, err
	}
	who.Email = strings.TrimSpace(who.Email)
	who.Name, who.GivenName, who.FamilyName = claimText(who.Name), claimText(who.GivenName), claimText(who.FamilyName)
	return who, nil
}

// maxClaimName is the longest profile name taken from a provider (the users' name fields' limit).
const maxClaimName = 128

// claimText is a profile claim as a user field takes it: a value that breaks the text rule or is
// too long is left out rather than refusing the sign-in over a field the person cannot change here.
func claimText(v string) string {
	v = strings.TrimSpace(v)
	if !text.Valid(v) || utf8.RuneCountInString(v) > maxClaimName {
		return ""
	}
	return v
}

// verifiedForPolicy says whether the app's email-verification policy lets u sign in: Berth
// verified the address, or the provider asserts it verified.
func verifiedForPolicy(a domain.App, u domain.User, providerVerified bool) bool {
	return !verificationRequired(a) || u.EmailVerified || providerVerified
}

// signInLinked signs in the user a provider identity is linked to, recording what the provider now
// asserts about the address.
func (s *Service) signInLinked(ctx context.Context, a domain.App, l domain.ProviderLink, who ProviderIdentity, p LoginParams, b browser) (ProviderOutcome, error) {
	u, err := s.store.GetUser(ctx, a.ID, l.UserID)
	if err != nil {
		return ProviderOutcome{}, err
	}
	if err := inactive(u); err != nil {
		return ProviderOutcome{}, err
	}
	if u, err = s.recordProviderEmail(ctx, u, l.Slot, who.EmailVerified); err != nil {
		return ProviderOutcome{}, err
	}
	if !verifiedForPolicy(a, u, who.EmailVerified) {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonUnverified, "%s does not assert the address verified and the app requires it", l.Slot)
	}
	return s.providerSignedIn(ctx, a, u, p, b)
}

// recordProviderEmail sets the user's idpX_email_verified (with a user.updated event) when it
// changed.
func (s *Service) recordProviderEmail(ctx context.Context, u domain.User, slot string, verified bool) (domain.User, error) {
	probe := u
	if changed, err := probe.SetProviderEmailVerified(slot, verified, s.now()); err != nil || changed == "" {
		return u, err
	}
	return s.store.UpdateUser(ctx, u.AppID, u.ID, func(x *domain.User) ([]events.Event, error) {
		changed, err := x.SetProviderEmailVerified(slot, verified, s.now())
		if err != nil || changed == "" {
			return nil, err
		}
		return event(identityv1.EventUserUpdated, x.AppID, convert.UserChanged(*x, []string{changed}))
	})
}

// offerLink answers a provider identity whose address has an account. Only an address the
// provider asserts verified may be linked, and only once the person proves the account is theirs:
// a provider that lets anyone claim any address must never open someone else's account.
func (s *Service) offerLink(a domain.App, idp domain.IdentityProvider, u domain.User, who ProviderIdentity, p LoginParams) (ProviderOutcome, error) {
	if !who.EmailVerified {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonTaken, "%s: the address has an account and the provider does not assert it verified", idp.Slot)
	}
	sealed, err := s.seal(pendingLink{AppID: a.ID, Slot: idp.Slot, Subject: who.Subject, UserID: u.ID, Email: u.Email, Params: p,
		Expires: s.now().Add(providerFlowTTL)}, linkOwner)
	if err != nil {
		return ProviderOutcome{}, err
	}
	return ProviderOutcome{Link: sealed, Email: u.Email, ProviderName: idp.DisplayName, Params: p}, nil
}

// signUpLinked creates the user of a first provider sign-in, with its tenant, as sign-up does, and
// links the provider identity in the same write.
func (s *Service) signUpLinked(ctx context.Context, a domain.App, idp domain.IdentityProvider, who ProviderIdentity, p LoginParams, b browser) (ProviderOutcome, error) {
	if verificationRequired(a) && !who.EmailVerified {
		return ProviderOutcome{}, ProviderRefusal(ProviderReasonUnverified, "%s does not assert the address verified and the app requires it", idp.Slot)
	}
	// Each first sign-in creates a user and a tenant, as a sign-up does, and counts like one under
	// the client address's sign-up limit.
	if _, err := s.reserve(ctx, signUpLimits(s.limits, s.now(), addressKey(b.ip))...); err != nil {
		return ProviderOutcome{}, err
	}
	profile := domain.UserPatch{Email: &who.Email}
	for _, f := range []struct {
		v   string
		dst **string
	}{{who.Name, &profile.Name}, {who.GivenName, &profile.GivenName}, {who.FamilyName, &profile.FamilyName}} {
		if f.v != "" {
			*f.dst = &f.v
		}
	}
	u, err := s.newSignUpUser(ctx, a, profile, false, p.Referral)
	if err != nil {
		return ProviderOutcome{}, err
	}
	if _, err := u.SetProviderEmailVerified(idp.Slot, who.EmailVerified, u.CreatedAt); err != nil {
		return ProviderOutcome{}, err
	}
	l, err := domain.NewProviderLink(a.ID, idp.Slot, who.Subject, u.ID, u.Email, s.now())
	if err != nil {
		return ProviderOutcome{}, err
	}
	created, err := event(identityv1.EventUserCreated, u.AppID, convert.UserChanged(u, nil))
	if err != nil {
		return ProviderOutcome{}, err
	}
	linked, err := linkedEvent(u, l)
	if err != nil {
		return ProviderOutcome{}, err
	}
	if err := s.store.CreateLinkedUser(ctx, u, l, append(created, linked...)...); err != nil {
		if errors.Is(err, domain.ErrEmailTaken) || errors.Is(err, domain.ErrProviderLinked) {
			// Another sign-in made the account or the link meanwhile: the person starts again and
			// takes the path that account now offers.
			return ProviderOutcome{}, ProviderRefusal(ProviderReasonLinked, "%s: a concurrent sign-in created the account or link", idp.Slot)
		}
		return ProviderOutcome{}, err
	}
	return s.providerSignedIn(ctx, a, u, p, b)
}

// providerSignedIn continues a sign-in whose first factor was the provider: to the app, or to the
// second step when the user has a second factor or the app requires one.
func (s *Service) providerSignedIn(ctx context.Context, a domain.App, u domain.User, p LoginParams, b browser) (ProviderOutcome, error) {
	out, err := s.afterFirstFactor(ctx, a, u, p, b, domain.AMRFederated)
	if err != nil || out.SecondFactor == "" {
		return ProviderOutcome{URL: out.URL}, err
	}
	// The page that asks for the second factor speaks the request's app and language.
	return ProviderOutcome{SecondFactor: out.SecondFactor, Enrol: out.Enrol, Params: p}, nil
}

func linkedEvent(u domain.User, l domain.ProviderLink) ([]events.Event, error) {
	return event(identityv1.EventUserProviderLinked, u.AppID, &identityv1.ProviderLinked{
		AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, Slot: l.Slot, At: convert.Timestamp(l.CreatedAt),
	})
}

// LoginProviders are the app's configured slots as the hosted page shows them.
func (s *Service) LoginProviders(ctx context.Context, appID string) ([]domain.IdentityProvider, error) {
	return s.store.ListIdentityProviders(ctx, appID)
}
