package domain

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/weborigin"

	"github.com/google/uuid"
)

// App is one application of a project: its users, roles and API keys belong to it, and its key pair
// signs the tenant tokens it is issued.
type App struct {
	ID           string
	ProjectID    string
	Name         string
	Enabled      bool
	RedirectURIs []string
	// ExtraOrigins are browser origins an operator allowed beyond those of the redirect URIs
	// (normalised by weborigin.Parse, sorted, unique): an app whose pages live on another origin
	// than its callback.
	ExtraOrigins []string
	// PublicKeyPEM is the current signing key's public half (SPKI PEM), served by route 15.
	PublicKeyPEM string
	// SealedPrivateKey is the PKCS#8 private key encrypted by the application layer; the domain never
	// holds the plaintext so that no store or log can leak it by accident.
	SealedPrivateKey []byte
	// AccessTokenTTL and RefreshTokenTTL are how long the tokens issued to the app's users live.
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	// Branding is the app's look on its hosted pages and mails and their default language.
	Branding Branding
	// EmailVerification is whether a user must prove the address before signing in.
	EmailVerification EmailVerification
	// MFA is whether users may or must prove a second factor at sign-in.
	MFA MFAPolicy
	// PasskeySignIn lets users sign in with a passkey instead of the password.
	PasskeySignIn bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Default token lifetimes: short access tokens keep a stolen one useful only briefly (verification
// re-checks the user anyway); refresh tokens rotate on every use, so a month keeps users signed in
// without making an abandoned token live forever.
const (
	DefaultAccessTokenTTL  = 15 * time.Minute
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
)

// Bounds of the configurable lifetimes. An access token below a minute would expire during
// ordinary clock skew; above a day, freezing a user would take too long to reach services that
// cache verifications. Refresh tokens must outlive access tokens or refreshing could not work.
const (
	minAccessTokenTTL  = time.Minute
	maxAccessTokenTTL  = 24 * time.Hour
	maxRefreshTokenTTL = 365 * 24 * time.Hour
)

// SetTokenLifetimes sets the app's token lifetimes; zero selects the default.
func (a *App) SetTokenLifetimes(access, refresh time.Duration) error {
	if access == 0 {
		access = DefaultAccessTokenTTL
	}
	if refresh == 0 {
		refresh = DefaultRefreshTokenTTL
	}
	if access < minAccessTokenTTL || access > maxAccessTokenTTL {
		return fault.InvalidField("accessTokenTtlSeconds", "must be between %d and %d seconds", int(minAccessTokenTTL.Seconds()), int(maxAccessTokenTTL.Seconds()))
	}
	if refresh <= access || refresh > maxRefreshTokenTTL {
		return fault.InvalidField("refreshTokenTtlSeconds", "must be longer than the access token lifetime and at most %d seconds", int(maxRefreshTokenTTL.Seconds()))
	}
	a.AccessTokenTTL, a.RefreshTokenTTL = access, refresh
	return nil
}

// RegisteredRedirect reports whether uri is one of the app's redirect URIs. One trailing "/" is
// ignored on both sides: clients add or drop it ("https://app.test" vs "https://app.test/"), and
// both name the same page. Anything else must match exactly, so a code can never be sent to a
// page the app did not register.
func (a App) RegisteredRedirect(uri string) bool {
	if uri == "" {
		return false
	}
	want := TrimSlash(uri)
	for _, r := range a.RedirectURIs {
		if TrimSlash(r) == want {
			return true
		}
	}
	return false
}

// TrimSlash drops one trailing "/" (the published browser SDK expects the token response's
// redirectUri without it).
func TrimSlash(uri string) string { return strings.TrimSuffix(uri, "/") }

// KeyPair is a freshly generated signing key pair: the public half as SPKI PEM and the private half
// as PKCS#8 DER, ready to be sealed.
type KeyPair struct {
	PublicPEM  string
	PrivateDER []byte
}

// rsaBits is the signing key size: RS256 with 2048-bit keys is what the published SDKs verify.
const rsaBits = 2048

// GenerateKeyPair creates a new RSA-2048 key pair.
func GenerateKeyPair() (KeyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate rsa key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("marshal private key: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return KeyPair{}, fmt.Errorf("marshal public key: %w", err)
	}
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki})
	return KeyPair{PublicPEM: string(pub), PrivateDER: der}, nil
}

// NewApp validates the app's name and redirect URIs. The app starts enabled, requires verified
// addresses and lets users enrol a second factor; the caller sets the key pair (sealed) before storing it.
func NewApp(projectID, name string, redirectURIs []string, now time.Time) (App, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return App{}, err
	}
	uris := make([]string, 0, len(redirectURIs))
	for i, raw := range redirectURIs {
		if err := checkRedirectURI(raw); err != nil {
			return App{}, fault.InvalidField(fmt.Sprintf("redirectUris[%d]", i), "%s", err.Error())
		}
		uris = append(uris, raw)
	}
	now = now.UTC()
	return App{
		ID: uuid.NewString(), ProjectID: projectID, Name: name, Enabled: true, RedirectURIs: uris, ExtraOrigins: []string{},
		AccessTokenTTL: DefaultAccessTokenTTL, RefreshTokenTTL: DefaultRefreshTokenTTL,
		EmailVerification: VerificationRequired, MFA: MFAOptional,
		CreatedAt: now, UpdatedAt: now,
	}, nil
}

// maxURL bounds stored URLs; browsers and providers reject much longer ones anyway.
const maxURL = 2048

// checkRedirectURI accepts absolute http(s) URLs without a fragment: OAuth forbids fragments in
// redirect URIs because the code would otherwise leak into the browser history of another page.
func checkRedirectURI(raw string) error {
	if strings.Contains(raw, "#") {
		return fmt.Errorf("must not contain a fragment")
	}
	return checkAbsoluteURL(raw)
}

// checkAbsoluteURL accepts absolute http or https URLs with a host.
func checkAbsoluteURL(raw string) error {
	if len(raw) > maxURL {
		return fmt.Errorf("must be at most %d characters", maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("must be an absolute http or https URL")
	}
	return nil
}

// MaxExtraOrigins bounds the origins an operator may add to one app; every verification of the
// app's tokens carries the whole list to the other services.
const MaxExtraOrigins = 100

// RedirectOrigins are the origins of the app's redirect URIs, sorted and unique: the pages an app
// sends its users back to are the pages that exchange the code, so they are always allowed.
func (a App) RedirectOrigins() []string {
	out := make([]string, 0, len(a.RedirectURIs))
	for _, u := range a.RedirectURIs {
		if o, ok := weborigin.Of(u); ok {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// WebOrigins are every browser origin allowed to read the app's answers (CORS): the redirect
// URIs' origins and the extra ones, sorted and unique.
func (a App) WebOrigins() []string {
	out := append(a.RedirectOrigins(), a.ExtraOrigins...)
	slices.Sort(out)
	return slices.Compact(out)
}

// MaxRedirectURIs bounds an app's redirect URIs; each is also a browser origin every verification
// of the app's tokens carries.
const MaxRedirectURIs = 50

// SetRedirectURIs replaces the app's redirect URIs with uris (duplicates dropped), each checked as
// NewApp checks them. It reports whether they changed.
func (a *App) SetRedirectURIs(uris []string) (bool, error) {
	out := make([]string, 0, len(uris))
	for i, raw := range uris {
		if err := checkRedirectURI(raw); err != nil {
			return false, fault.InvalidField(fmt.Sprintf("redirectUris[%d]", i), "%s", err.Error())
		}
		if !slices.Contains(out, raw) {
			out = append(out, raw)
		}
	}
	if len(out) > MaxRedirectURIs {
		return false, fault.InvalidField("redirectUris", "must be at most %d", MaxRedirectURIs)
	}
	if slices.Equal(out, a.RedirectURIs) {
		return false, nil
	}
	a.RedirectURIs = out
	return true, nil
}

// AddOrigin allows one more browser origin. It reports false when the origin was allowed as an
// extra origin already (nothing changes then).
func (a *App) AddOrigin(raw string) (bool, error) {
	o, err := weborigin.Parse(raw)
	if err != nil {
		return false, fault.InvalidField("origin", "%s", err.Error())
	}
	if slices.Contains(a.ExtraOrigins, o) {
		return false, nil
	}
	if len(a.ExtraOrigins) >= MaxExtraOrigins {
		return false, fault.InvalidField("origin", "an app has at most %d extra origins", MaxExtraOrigins)
	}
	a.ExtraOrigins = append(slices.Clone(a.ExtraOrigins), o)
	slices.Sort(a.ExtraOrigins)
	return true, nil
}

// RemoveOrigin takes back an extra origin. An origin that is not one (never added, or only the
// origin of a redirect URI) is a NotFound fault: the operator's typo must not look like success.
func (a *App) RemoveOrigin(raw string) error {
	o, err := weborigin.Parse(raw)
	if err != nil {
		return fault.InvalidField("origin", "%s", err.Error())
	}
	i := slices.Index(a.ExtraOrigins, o)
	if i < 0 {
		if slices.Contains(a.RedirectOrigins(), o) {
			return fault.InvalidField("origin", "%s is the origin of a redirect URI and stays allowed", o)
		}
		return fault.NotFound("origin %s is not an extra origin of the app", o)
	}
	a.ExtraOrigins = slices.Delete(slices.Clone(a.ExtraOrigins), i, i+1)
	return nil
}
