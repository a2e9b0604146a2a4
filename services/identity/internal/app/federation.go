package app

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

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

// providerTimeout bounds each call to a provider (discovery, keys, token, userinfo): a provider
// that hangs must not hold the sign-in page open.
const providerTimeout = 10 * time.Second

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

func providerRefusal(reason, format string, args ...any) error {
	return fault.InvalidField("provider", format, args...).WithReason(reason)
}

// providerFlow is one provider sign-in between the button and the callback, sealed (flowOwner) into
// the cookie the hosted page keeps: nothing about it is stored server-side.
type providerFlow struct {
	AppID    string      `json:"app"`
	Slot     string      `json:"slot"`
	Params   LoginParams `json:"params"`
	SignUp   bool        `json:"signUp,omitempty"`
	State    string      `json:"state"`
	Nonce    string      `json:"nonce"`
	Verifier string      `json:"verifier"`
	Expires  time.Time   `json:"expires"`
}

// pendingLink is a provider identity waiting for the password of the account it would link to,
// sealed (linkOwner) into the confirmation form.
type pendingLink struct {
	AppID   string      `json:"app"`
	Slot    string      `json:"slot"`
	Subject string      `json:"sub"`
	UserID  string      `json:"user"`
	Email   string      `json:"email"`
	Params  LoginParams `json:"params"`
	Expires time.Time   `json:"expires"`
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
func (s *Service) StartProviderSignIn(ctx context.Context, p LoginParams, slot string, signUp bool) (ProviderStart, error) {
	a, err := s.enabledLoginApp(ctx, p)
	if err != nil {
		return ProviderStart{}, err
	}
	if s.publicURL == "" {
		return ProviderStart{}, fault.Unavailable(0, "sign-in with identity providers needs the deployment's public URL")
	}
	idp, err := s.configuredProvider(ctx, a.ID, slot)
	if err != nil {
		return ProviderStart{}, err
	}
	cfg, _, err := s.oauthConfig(ctx, idp)
	if err != nil {
		return ProviderStart{}, err
	}
	f := providerFlow{AppID: a.ID, Slot: idp.Slot, Params: p, SignUp: signUp, Verifier: oauth2.GenerateVerifier(),
		Expires: s.now().Add(providerFlowTTL)}
	if f.State, err = domain.NewState(); err != nil {
		return ProviderStart{}, err
	}
	if f.Nonce, err = domain.NewState(); err != nil {
		return ProviderStart{}, err
	}
	sealed, err := s.seal(f, flowOwner)
	if err != nil {
		return ProviderStart{}, err
	}
	return ProviderStart{
		URL:  cfg.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce)),
		Flow: sealed,
	}, nil
}

func (s *Service) configuredProvider(ctx context.Context, appID, slot string) (domain.IdentityProvider, error) {
	if !domain.IsProviderSlot(slot) {
		return domain.IdentityProvider{}, domain.ErrBadSlot
	}
	idp, err := s.store.GetIdentityProvider(ctx, appID, slot)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.IdentityProvider{}, providerRefusal(ProviderReasonSlot, "slot %s of the app is not configured", slot)
	}
	return idp, err
}

// providerContext makes go-oidc and oauth2 call the provider with a bounded client.
func providerContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, &http.Client{Timeout: providerTimeout})
}

// discoverySuffix ends a discovery URL; go-oidc wants the issuer, which the URL starts with.
const discoverySuffix = "/.well-known/openid-configuration"

// oauthConfig reads the provider's endpoints (its discovery document, which go-oidc checks names
// the same issuer, or the slot's explicit endpoints) and opens the slot's client secret.
func (s *Service) oauthConfig(ctx context.Context, idp domain.IdentityProvider) (oauth2.Config, *oidc.Provider, error) {
	provider, err := s.provider(ctx, idp)
	if err != nil {
		return oauth2.Config{}, nil, err
	}
	cfg := oauth2.Config{ClientID: idp.ClientID, Endpoint: provider.Endpoint(), Scopes: idp.Scopes,
		RedirectURL: s.publicURL + ProviderCallbackPath}
	if len(idp.SealedSecret) > 0 {
		secret, err := s.box.Open(idp.SealedSecret, domain.ProviderSecretOwner(idp.AppID, idp.Slot))
		if err != nil {
			return oauth2.Config{}, nil, err
		}
		cfg.ClientSecret = string(secret)
	}
	return cfg, provider, nil
}

// providerCacheTTL is how long a provider's discovery document is reused. Its keys are not bound
// by it: go-oidc fetches the JWKS again when a token names a key it does not know.
const providerCacheTTL = time.Hour

// cachedProvider is a slot's provider as discovered at fetched, for the slot's configuration of
// updated.
type cachedProvider struct {
	provider         *oidc.Provider
	updated, fetched time.Time
}

// provider is the slot's provider: its discovery document (which go-oidc checks names the
// configured issuer) or its explicit endpoints, reused for providerCacheTTL while the slot is
// unchanged, so that neither the sign-in link nor the callback fetches discovery and keys anew
// each time.
func (s *Service) provider(ctx context.Context, idp domain.IdentityProvider) (*oidc.Provider, error) {
	key := idp.AppID + "/" + idp.Slot
	now := time.Now()
	if c, ok := s.providers.Load(key); ok {
		if c := c.(cachedProvider); c.updated.Equal(idp.UpdatedAt) && now.Sub(c.fetched) < providerCacheTTL {
			return c.provider, nil
		}
	}
	// The provider keeps the context's HTTP client (bounded) for its later key fetches, not the
	// request's deadline.
	pctx := providerContext(context.WithoutCancel(ctx))
	var provider *oidc.Provider
	if idp.DiscoveryURL != "" {
		dctx, cancel := context.WithTimeout(pctx, providerTimeout)
		defer cancel()
		p, err := oidc.NewProvider(dctx, strings.TrimSuffix(idp.DiscoveryURL, discoverySuffix))
		if err != nil {
			return nil, providerRefusal(ProviderReasonUnreachable, "discovery of %s failed: %v", idp.Slot, err)
		}
		provider = p
	} else {
		provider = (&oidc.ProviderConfig{IssuerURL: idp.Issuer, AuthURL: idp.AuthURL, TokenURL: idp.TokenURL,
			UserInfoURL: idp.UserinfoURL, JWKSURL: idp.JWKSURL}).NewProvider(pctx)
	}
	s.providers.Store(key, cachedProvider{provider: provider, updated: idp.UpdatedAt, fetched: now})
	return provider, nil
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
	URL          string
	Link         string
	Email        string
	ProviderName string
	Params       LoginParams
}

// providerIdentity is what the provider asserted about the person.
type providerIdentity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	GivenName     string
	FamilyName    string
}

// FinishProviderSignIn completes a provider sign-in at its callback. The state must be the flow's
// (compared in constant time) and the flow live; the code is exchanged with the PKCE verifier and
// the ID token verified (signature through the provider's JWKS, issuer, audience, expiry, and the
// flow's nonce). Then the linking rules decide (docs/accounts.md):
//   - a linked provider identity signs its user in;
//   - a new address creates the user and its tenant as sign-up does, linked;
//   - an address that has an account is linked only when the provider asserts it verified and the
//     person then gives the account's password (the outcome's Link); an unverified one is refused
//     and nothing is created.
func (s *Service) FinishProviderSignIn(ctx context.Context, cb ProviderCallback) (ProviderOutcome, error) {
	var f providerFlow
	if !s.open(cb.Flow, flowOwner, &f) {
		return ProviderOutcome{}, providerRefusal(ProviderReasonState, "the callback carries no flow this deployment sealed")
	}
	if subtle.ConstantTimeCompare([]byte(cb.State), []byte(f.State)) != 1 {
		return ProviderOutcome{}, providerRefusal(ProviderReasonState, "the callback's state is not its flow's")
	}
	if !s.now().Before(f.Expires) {
		return ProviderOutcome{}, providerRefusal(ProviderReasonState, "the flow expired")
	}
	switch {
	case cb.Error == "access_denied":
		return ProviderOutcome{}, providerRefusal(ProviderReasonDenied, "%s: consent denied at the provider", f.Slot)
	case cb.Error != "":
		return ProviderOutcome{}, providerRefusal(ProviderReasonError, "%s answered error %q: %s", f.Slot, cb.Error, cb.ErrorDescription)
	case cb.Code == "":
		return ProviderOutcome{}, providerRefusal(ProviderReasonCode, "%s sent no code", f.Slot)
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
		return ProviderOutcome{}, providerRefusal(ProviderReasonDomain, "%s: the address's domain may not sign in through this slot", idp.Slot)
	}
	link, err := s.store.GetProviderLink(ctx, a.ID, idp.Slot, who.Subject)
	switch {
	case err == nil:
		return s.signInLinked(ctx, a, link, who, p, b)
	case !errors.Is(err, domain.ErrNotFound):
		return ProviderOutcome{}, err
	}
	if !domain.IsEmail(who.Email) {
		return ProviderOutcome{}, providerRefusal(ProviderReasonEmail, "%s named no usable email address (scope email?)", idp.Slot)
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

// providerIdentity exchanges the code and verifies the ID token; the userinfo endpoint fills in an
// address the token lacks.
func (s *Service) providerIdentity(ctx context.Context, idp domain.IdentityProvider, f providerFlow, code string) (providerIdentity, error) {
	cfg, provider, err := s.oauthConfig(ctx, idp)
	if err != nil {
		return providerIdentity{}, err
	}
	pctx := providerContext(ctx)
	tok, err := cfg.Exchange(pctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var refused *oauth2.RetrieveError
		if errors.As(err, &refused) && refused.Response != nil && refused.Response.StatusCode < http.StatusInternalServerError {
			return providerIdentity{}, providerRefusal(ProviderReasonCode, "%s refused the code: %v", idp.Slot, err)
		}
		return providerIdentity{}, providerRefusal(ProviderReasonUnreachable, "%s token endpoint: %v", idp.Slot, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return providerIdentity{}, providerRefusal(ProviderReasonToken, "%s returned no ID token (scope openid?)", idp.Slot)
	}
	idt, err := provider.Verifier(&oidc.Config{ClientID: idp.ClientID, Now: s.clock}).Verify(pctx, raw)
	if err != nil {
		return providerIdentity{}, providerRefusal(ProviderReasonToken, "%s ID token: %v", idp.Slot, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return providerIdentity{}, providerRefusal(ProviderReasonToken, "%s ID token: the nonce is not the flow's", idp.Slot)
	}
	var c struct {
		Email         string   `json:"email"`
		EmailVerified flexBool `json:"email_verified"`
		Name          string   `json:"name"`
		GivenName     string   `json:"given_name"`
		FamilyName    string   `json:"family_name"`
	}
	if err := idt.Claims(&c); err != nil {
		return providerIdentity{}, providerRefusal(ProviderReasonToken, "%s ID token claims: %v", idp.Slot, err)
	}
	if c.Email == "" && provider.UserInfoEndpoint() != "" {
		info, err := provider.UserInfo(pctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return providerIdentity{}, providerRefusal(ProviderReasonUnreachable, "%s userinfo: %v", idp.Slot, err)
		}
		// Userinfo of another subject would be another person's address.
		if info.Subject == idt.Subject {
			c.Email, c.EmailVerified = info.Email, flexBool(info.EmailVerified)
		}
	}
	if !text.Valid(idt.Subject) || idt.Subject == "" || len(idt.Subject) > 255 {
		return providerIdentity{}, providerRefusal(ProviderReasonToken, "%s ID token: unusable subject", idp.Slot)
	}
	return providerIdentity{
		Subject: idt.Subject, Email: strings.TrimSpace(c.Email), EmailVerified: bool(c.EmailVerified),
		Name: claimText(c.Name), GivenName: claimText(c.GivenName), FamilyName: claimText(c.FamilyName),
	}, nil
}

// flexBool reads a JSON boolean, or the strings "true" and "false" some providers send instead.
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case "true", `"true"`:
		*b = true
	case "false", `"false"`, "null":
		*b = false
	default:
		return fmt.Errorf("email_verified is neither true nor false")
	}
	return nil
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
func (s *Service) signInLinked(ctx context.Context, a domain.App, l domain.ProviderLink, who providerIdentity, p LoginParams, b browser) (ProviderOutcome, error) {
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
		return ProviderOutcome{}, providerRefusal(ProviderReasonUnverified, "%s does not assert the address verified and the app requires it", l.Slot)
	}
	target, err := s.completeSignIn(ctx, a, u, p, b)
	return ProviderOutcome{URL: target}, err
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
// provider asserts verified may be linked, and only once the person gives the account's password:
// a provider that lets anyone claim any address must never open someone else's account.
func (s *Service) offerLink(a domain.App, idp domain.IdentityProvider, u domain.User, who providerIdentity, p LoginParams) (ProviderOutcome, error) {
	if !who.EmailVerified {
		return ProviderOutcome{}, providerRefusal(ProviderReasonTaken, "%s: the address has an account and the provider does not assert it verified", idp.Slot)
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
func (s *Service) signUpLinked(ctx context.Context, a domain.App, idp domain.IdentityProvider, who providerIdentity, p LoginParams, b browser) (ProviderOutcome, error) {
	if verificationRequired(a) && !who.EmailVerified {
		return ProviderOutcome{}, providerRefusal(ProviderReasonUnverified, "%s does not assert the address verified and the app requires it", idp.Slot)
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
			return ProviderOutcome{}, providerRefusal(ProviderReasonLinked, "%s: a concurrent sign-in created the account or link", idp.Slot)
		}
		return ProviderOutcome{}, err
	}
	target, err := s.completeSignIn(ctx, a, u, p, b)
	return ProviderOutcome{URL: target}, err
}

func linkedEvent(u domain.User, l domain.ProviderLink) ([]events.Event, error) {
	return event(identityv1.EventUserProviderLinked, u.AppID, &identityv1.ProviderLinked{
		AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, Slot: l.Slot, At: convert.Timestamp(l.CreatedAt),
	})
}

// ConfirmLinkInput is the confirmation form of a link to an existing account.
type ConfirmLinkInput struct {
	Link, Password      string
	ClientIP, UserAgent string
}

// ConfirmProviderLink links the pending provider identity to the account whose password the person
// gave (under the sign-in attempt limits), records the provider's verified address and signs in,
// continuing the authorization request.
func (s *Service) ConfirmProviderLink(ctx context.Context, in ConfirmLinkInput) (string, error) {
	var pl pendingLink
	if !s.open(in.Link, linkOwner, &pl) || !s.now().Before(pl.Expires) {
		return "", providerRefusal(ProviderReasonLink, "the link confirmation is broken or expired")
	}
	a, err := s.enabledLoginApp(ctx, pl.Params)
	if err != nil {
		return "", err
	}
	if err := domain.CheckUserAgent(in.UserAgent); err != nil {
		return "", err
	}
	ip := clientIP(in.ClientIP)
	u, err := s.passwordUser(ctx, a, pl.Email, in.Password, ip)
	if err != nil {
		return "", err
	}
	if u.ID != pl.UserID {
		// The address moved to another account since the callback.
		return "", providerRefusal(ProviderReasonLink, "the address belongs to another account now")
	}
	l, err := domain.NewProviderLink(a.ID, pl.Slot, pl.Subject, u.ID, pl.Email, s.now())
	if err != nil {
		return "", err
	}
	evs, err := linkedEvent(u, l)
	if err != nil {
		return "", err
	}
	if err := s.store.CreateProviderLink(ctx, l, evs...); err != nil {
		if errors.Is(err, domain.ErrProviderLinked) {
			return "", providerRefusal(ProviderReasonLinked, "%s: the identity or the account's slot is linked already", pl.Slot)
		}
		return "", err
	}
	slog.InfoContext(ctx, "provider identity linked", slog.String("app_id", a.ID), slog.String("user_id", u.ID), slog.String("slot", pl.Slot))
	if u, err = s.recordProviderEmail(ctx, u, pl.Slot, true); err != nil {
		return "", err
	}
	p := pl.Params
	p.Service = pl.Slot
	return s.completeSignIn(ctx, a, u, p, browser{ip: ip, userAgent: in.UserAgent})
}

// LoginProviders are the app's configured slots as the hosted page shows them.
func (s *Service) LoginProviders(ctx context.Context, appID string) ([]domain.IdentityProvider, error) {
	return s.store.ListIdentityProviders(ctx, appID)
}
