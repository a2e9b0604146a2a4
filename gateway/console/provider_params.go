package console

import (
	"net/url"
	"strings"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// appSetIDP is the app page's action that configures an identity-provider slot.
const appSetIDP = "setProvider"

// maxScopes and maxDomains bound the space- or comma-separated lists of the provider form; identity
// checks each entry.
const (
	maxScopes  = 32
	maxDomains = 64
)

// providerForm is the slot configuration the app page posts: the provider as identity stores it
// and the client secret ("" keeps the stored one).
type providerForm struct {
	Provider     *identityv1.IdentityProvider
	ClientSecret string
}

// providerFrom reads the provider form. Identity judges the values (URLs, the discovery URL or the
// explicit endpoints, scopes, domains); the console only keeps them bounded and within the text
// rule, and refuses a form naming no slot, display name or client id.
func providerFrom(v url.Values) (providerForm, error) {
	p := &identityv1.IdentityProvider{}
	var err error
	if p.Slot, err = oneOf(v, "slot", "idpA", "idpB", "idpC", "idpD"); err != nil {
		return providerForm{}, err
	}
	for _, f := range []struct {
		key      string
		into     *string
		limit    int
		required bool
	}{
		{"provider_name", &p.DisplayName, maxName, true},
		{"client_id", &p.ClientId, 256, true},
		{"discovery_url", &p.DiscoveryUrl, maxOrigin, false},
		{"issuer", &p.Issuer, maxOrigin, false},
		{"authorization_url", &p.AuthorizationUrl, maxOrigin, false},
		{"token_url", &p.TokenUrl, maxOrigin, false},
		{"userinfo_url", &p.UserinfoUrl, maxOrigin, false},
		{"jwks_url", &p.JwksUrl, maxOrigin, false},
	} {
		if *f.into, err = textField(v, f.key, f.limit, f.required); err != nil {
			return providerForm{}, err
		}
	}
	if p.Scopes, err = list(v, "scopes", maxScopes); err != nil {
		return providerForm{}, err
	}
	if p.AllowedEmailDomains, err = list(v, "allowed_domains", maxDomains); err != nil {
		return providerForm{}, err
	}
	// The secret is taken as typed, like a password: a provider's secret may hold any character.
	secret := v.Get("client_secret")
	if secret != "" {
		if secret, err = password(v, "client_secret"); err != nil {
			return providerForm{}, err
		}
	}
	return providerForm{Provider: p, ClientSecret: secret}, nil
}

// list reads a field of entries separated by spaces or commas, at most limit of them.
func list(v url.Values, key string, limit int) ([]string, error) {
	s, err := textField(v, key, maxOrigin, false)
	if err != nil {
		return nil, err
	}
	entries := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(entries) > limit {
		return nil, errField{key}
	}
	return entries, nil
}
