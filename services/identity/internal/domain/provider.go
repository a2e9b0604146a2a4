package domain

import (
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// ProviderSlots are the four identity-provider slots an app has, in the contract's names: the user
// fields idpA_email_verified … idpD_email_verified and route 1's service name them.
var ProviderSlots = []string{"idpA", "idpB", "idpC", "idpD"}

// ErrBadSlot answers a slot that is none of ProviderSlots.
var ErrBadSlot = fault.InvalidField("slot", "must be idpA, idpB, idpC or idpD")

// IsProviderSlot reports whether s names a slot (exactly, case included: it is a wire value).
func IsProviderSlot(s string) bool { return slices.Contains(ProviderSlots, s) }

// IdentityProvider is an app's OpenID Connect (or plain OAuth 2.0) provider in one slot. Either
// DiscoveryURL is set and the endpoints come from the provider's discovery document, or Issuer,
// AuthURL, TokenURL and JWKSURL name them (UserinfoURL is optional in both cases).
type IdentityProvider struct {
	AppID, Slot string
	// DisplayName is the button's "Continue with …".
	DisplayName  string
	DiscoveryURL string
	Issuer       string
	AuthURL      string
	TokenURL     string
	UserinfoURL  string
	JWKSURL      string
	ClientID     string
	// SealedSecret is the client secret sealed for the slot (sealbox, owner ProviderSecretOwner);
	// nil for a public client, which PKCE alone protects.
	SealedSecret []byte
	// Scopes always start with openid.
	Scopes []string
	// AllowedDomains, when not empty, are the only email domains (lower case) that may sign in
	// through the provider.
	AllowedDomains []string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ProviderSettings are an operator's values for a slot, before they are checked.
type ProviderSettings struct {
	DisplayName, DiscoveryURL, Issuer, AuthURL, TokenURL, UserinfoURL, JWKSURL, ClientID string
	Scopes, AllowedDomains                                                               []string
}

// Bounds of a provider's settings.
const (
	maxClientID       = 256
	maxScopes         = 20
	maxScopeLength    = 64
	maxAllowedDomains = 50
	// MaxClientSecret bounds a client secret in bytes; providers issue secrets far shorter.
	MaxClientSecret = 512
)

var (
	scopeShape  = regexp.MustCompile(`^[\x21\x23-\x5b\x5d-\x7e]+$`) // RFC 6749 scope-token
	domainShape = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
)

// NewIdentityProvider checks an operator's settings for slot of appID and normalises them. The
// secret is sealed by the caller; the result has none.
func NewIdentityProvider(appID, slot string, in ProviderSettings, now time.Time) (IdentityProvider, error) {
	if !IsProviderSlot(slot) {
		return IdentityProvider{}, ErrBadSlot
	}
	p := IdentityProvider{AppID: appID, Slot: slot, CreatedAt: now, UpdatedAt: now}
	var err error
	if p.DisplayName, err = requiredName("provider.displayName", in.DisplayName); err != nil {
		return IdentityProvider{}, err
	}
	for _, f := range []struct {
		field string
		in    string
		out   *string
	}{
		{"provider.discoveryUrl", in.DiscoveryURL, &p.DiscoveryURL},
		{"provider.issuer", in.Issuer, &p.Issuer},
		{"provider.authorizationUrl", in.AuthURL, &p.AuthURL},
		{"provider.tokenUrl", in.TokenURL, &p.TokenURL},
		{"provider.userinfoUrl", in.UserinfoURL, &p.UserinfoURL},
		{"provider.jwksUrl", in.JWKSURL, &p.JWKSURL},
	} {
		if *f.out, err = checkProviderURL(f.field, strings.TrimSpace(f.in)); err != nil {
			return IdentityProvider{}, err
		}
	}
	explicit := p.Issuer != "" || p.AuthURL != "" || p.TokenURL != "" || p.JWKSURL != ""
	switch {
	case p.DiscoveryURL != "" && explicit:
		return IdentityProvider{}, fault.InvalidField("provider.discoveryUrl", "name either a discovery URL or the endpoints, not both")
	case p.DiscoveryURL == "" && (p.Issuer == "" || p.AuthURL == "" || p.TokenURL == "" || p.JWKSURL == ""):
		return IdentityProvider{}, fault.InvalidField("provider.discoveryUrl",
			"is required unless issuer, authorizationUrl, tokenUrl and jwksUrl are all given")
	}
	p.ClientID = strings.TrimSpace(in.ClientID)
	if p.ClientID == "" {
		return IdentityProvider{}, fault.InvalidField("provider.clientId", "is required")
	}
	if err := checkText("provider.clientId", p.ClientID, maxClientID); err != nil {
		return IdentityProvider{}, err
	}
	if p.Scopes, err = providerScopes(in.Scopes); err != nil {
		return IdentityProvider{}, err
	}
	if p.AllowedDomains, err = allowedDomains(in.AllowedDomains); err != nil {
		return IdentityProvider{}, err
	}
	return p, nil
}

// ProviderSecretOwner is the sealbox owner of a slot's client secret: a sealed secret copied to
// another app's or slot's row does not open.
func ProviderSecretOwner(appID, slot string) string { return appID + "/idp/" + slot }

// CheckClientSecret checks a client secret before it is sealed.
func CheckClientSecret(secret string) error {
	if len(secret) > MaxClientSecret {
		return fault.InvalidField("clientSecret", "must be at most %d bytes", MaxClientSecret)
	}
	return checkText("clientSecret", secret, MaxClientSecret)
}

// checkProviderURL accepts "" or an absolute https URL without credentials or fragment; plain http
// only on a loopback host, where a provider on the same machine (a sandbox) runs: anywhere else it
// would expose the code and the client secret on the wire.
func checkProviderURL(field, raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	if err := checkText(field, raw, maxURL); err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil || strings.Contains(raw, "#") {
		return "", fault.InvalidField(field, "must be an absolute https URL without credentials or fragment")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
	default:
		return "", fault.InvalidField(field, "must be an https URL (http only on a loopback host)")
	}
	return raw, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// providerScopes normalises the scopes: openid first (the ID token needs it), then the others once
// each in the order given; none given is "openid email profile".
func providerScopes(in []string) ([]string, error) {
	if len(in) == 0 {
		return []string{"openid", "email", "profile"}, nil
	}
	if len(in) > maxScopes {
		return nil, fault.InvalidField("provider.scopes", "must be at most %d", maxScopes)
	}
	out := []string{"openid"}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if len(s) > maxScopeLength || !scopeShape.MatchString(s) {
			return nil, fault.InvalidField("provider.scopes", "each must be a scope token of at most %d visible ASCII characters", maxScopeLength)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// allowedDomains normalises the email domains to lower case, sorted and unique.
func allowedDomains(in []string) ([]string, error) {
	if len(in) > maxAllowedDomains {
		return nil, fault.InvalidField("provider.allowedEmailDomains", "must be at most %d", maxAllowedDomains)
	}
	var out []string
	for _, d := range in {
		d = strings.ToLower(strings.TrimSpace(d))
		if len(d) > 253 || !domainShape.MatchString(d) {
			return nil, fault.InvalidField("provider.allowedEmailDomains", "each must be a domain name in ASCII (punycode for international names)")
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// AllowsEmail reports whether the provider may sign in the address: any address when no domains
// are listed, else one whose domain is listed (exactly; a subdomain is another domain).
func (p IdentityProvider) AllowsEmail(email string) bool {
	if len(p.AllowedDomains) == 0 {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	return at >= 0 && slices.Contains(p.AllowedDomains, strings.ToLower(email[at+1:]))
}

// ProviderLink ties a provider identity (the slot and the provider's subject) to a user of the app.
type ProviderLink struct {
	AppID, Slot, Subject string
	UserID               string
	// Email is the address the provider named when the link was made, shown on the account page.
	Email     string
	CreatedAt time.Time
}

// maxSubject bounds a provider's subject; OpenID Connect caps it at 255 ASCII characters.
const maxSubject = 255

// ErrProviderLinked answers a link whose provider identity, or whose user's slot, is linked
// already.
var ErrProviderLinked = fault.InvalidField("provider", "this provider identity or slot is linked already")

// NewProviderLink checks a link.
func NewProviderLink(appID, slot, subject, userID, email string, now time.Time) (ProviderLink, error) {
	switch {
	case !IsProviderSlot(slot):
		return ProviderLink{}, ErrBadSlot
	case subject == "":
		return ProviderLink{}, fault.InvalidField("sub", "is required")
	}
	if err := checkText("sub", subject, maxSubject); err != nil {
		return ProviderLink{}, err
	}
	if err := checkText("email", email, maxText); err != nil {
		return ProviderLink{}, err
	}
	return ProviderLink{AppID: appID, Slot: slot, Subject: subject, UserID: userID, Email: email, CreatedAt: now}, nil
}

// providerFlag is the user's idpX_email_verified flag of slot, nil for an unknown slot.
func (u *User) providerFlag(slot string) *bool {
	switch slot {
	case "idpA":
		return &u.IdpAEmailVerified
	case "idpB":
		return &u.IdpBEmailVerified
	case "idpC":
		return &u.IdpCEmailVerified
	case "idpD":
		return &u.IdpDEmailVerified
	}
	return nil
}

// SetProviderEmailVerified records whether the provider of slot asserts the user's address
// verified (the user field idpX_email_verified) and returns the changed field's name, "" when
// nothing changed.
func (u *User) SetProviderEmailVerified(slot string, verified bool, now time.Time) (string, error) {
	f := u.providerFlag(slot)
	if f == nil {
		return "", ErrBadSlot
	}
	if *f == verified {
		return "", nil
	}
	*f, u.UpdatedAt = verified, now
	return slot + "_email_verified", nil
}

// NewPKCEVerifier returns a PKCE code verifier (RFC 7636): 43 characters of base64url from 256
// random bits.
func NewPKCEVerifier() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
