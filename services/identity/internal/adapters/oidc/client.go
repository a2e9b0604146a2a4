package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/berthhq/berth/pkg/text"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// DefaultTimeout bounds each call to a provider (discovery, keys, token, userinfo): a provider
// that hangs must not hold the sign-in page open.
const DefaultTimeout = 10 * time.Second

// cacheTTL is how long a provider's discovery document is reused. Its keys are not bound by it:
// go-oidc fetches the JWKS again when a token names a key it does not know.
const cacheTTL = time.Hour

// discoverySuffix ends a discovery URL; go-oidc wants the issuer, which the URL starts with.
const discoverySuffix = "/.well-known/openid-configuration"

// maxSubject bounds a provider's subject (OpenID Connect: at most 255 ASCII characters).
const maxSubject = 255

// Client talks to identity providers. It is safe for concurrent use.
type Client struct {
	http      *http.Client
	providers sync.Map // app id + "/" + slot -> cached
}

var _ app.ProviderClient = (*Client)(nil)

// New returns a client whose calls to providers are bounded by timeout (0: DefaultTimeout).
func New(timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{http: &http.Client{Timeout: timeout}}
}

// cached is a slot's provider as discovered at fetched, for the slot's configuration of updated.
type cached struct {
	provider         *oidc.Provider
	updated, fetched time.Time
}

// ctx carries the bounded HTTP client to go-oidc and oauth2.
func (c *Client) ctx(ctx context.Context) context.Context { return oidc.ClientContext(ctx, c.http) }

// provider is the slot's provider: its discovery document (which go-oidc checks names the
// configured issuer) or its explicit endpoints, reused for cacheTTL while the slot is unchanged.
func (c *Client) provider(ctx context.Context, idp domain.IdentityProvider) (*oidc.Provider, error) {
	key := idp.AppID + "/" + idp.Slot
	now := time.Now()
	if v, ok := c.providers.Load(key); ok {
		if v := v.(cached); v.updated.Equal(idp.UpdatedAt) && now.Sub(v.fetched) < cacheTTL {
			return v.provider, nil
		}
	}
	// The provider keeps the context's HTTP client for its later key fetches, not the request's
	// deadline.
	pctx := c.ctx(context.WithoutCancel(ctx))
	var provider *oidc.Provider
	if idp.DiscoveryURL != "" {
		p, err := oidc.NewProvider(pctx, strings.TrimSuffix(idp.DiscoveryURL, discoverySuffix))
		if err != nil {
			return nil, app.ProviderRefusal(app.ProviderReasonUnreachable, "discovery of %s failed: %v", idp.Slot, err)
		}
		provider = p
	} else {
		provider = (&oidc.ProviderConfig{IssuerURL: idp.Issuer, AuthURL: idp.AuthURL, TokenURL: idp.TokenURL,
			UserInfoURL: idp.UserinfoURL, JWKSURL: idp.JWKSURL}).NewProvider(pctx)
	}
	c.providers.Store(key, cached{provider: provider, updated: idp.UpdatedAt, fetched: now})
	return provider, nil
}

func (c *Client) config(ctx context.Context, call app.ProviderCall) (oauth2.Config, *oidc.Provider, error) {
	provider, err := c.provider(ctx, call.Provider)
	if err != nil {
		return oauth2.Config{}, nil, err
	}
	endpoint := provider.Endpoint()
	endpoint.AuthStyle = authStyle(provider)
	return oauth2.Config{ClientID: call.Provider.ClientID, ClientSecret: call.ClientSecret, Endpoint: endpoint,
		Scopes: call.Provider.Scopes, RedirectURL: call.RedirectURI}, provider, nil
}

// authStyle is how the client secret goes to the provider's token endpoint. Left to oauth2's
// probe, a first attempt that fails for any reason (a timeout included) is repeated in the other
// style with the same code, which a provider refuses as a code presented twice and may answer by
// revoking what the code was redeemed for. So the style is fixed up front: HTTP Basic, the
// default of OpenID Connect Discovery and the one RFC 6749 requires servers to accept, unless the
// discovery document lists only the form parameters.
func authStyle(provider *oidc.Provider) oauth2.AuthStyle {
	var doc struct {
		Methods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := provider.Claims(&doc); err != nil || len(doc.Methods) == 0 {
		return oauth2.AuthStyleInHeader
	}
	for _, m := range doc.Methods {
		if m == "client_secret_basic" {
			return oauth2.AuthStyleInHeader
		}
	}
	for _, m := range doc.Methods {
		if m == "client_secret_post" {
			return oauth2.AuthStyleInParams
		}
	}
	return oauth2.AuthStyleInHeader
}

// AuthCodeURL implements app.ProviderClient.
func (c *Client) AuthCodeURL(ctx context.Context, call app.ProviderCall, state, nonce, verifier string) (string, error) {
	cfg, _, err := c.config(ctx, call)
	if err != nil {
		return "", err
	}
	return cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), nil
}

// Exchange implements app.ProviderClient: the code is exchanged with the PKCE verifier, the ID
// token verified and its nonce compared with the flow's; the userinfo endpoint fills in an address
// the token lacks.
func (c *Client) Exchange(ctx context.Context, call app.ProviderCall, code, verifier, nonce string) (app.ProviderIdentity, error) {
	slot := call.Provider.Slot
	cfg, provider, err := c.config(ctx, call)
	if err != nil {
		return app.ProviderIdentity{}, err
	}
	pctx := c.ctx(ctx)
	tok, err := cfg.Exchange(pctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		var refused *oauth2.RetrieveError
		if errors.As(err, &refused) && refused.Response != nil && refused.Response.StatusCode < http.StatusInternalServerError {
			return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonCode, "%s refused the code: %v", slot, err)
		}
		return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonUnreachable, "%s token endpoint: %v", slot, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonToken, "%s returned no ID token (scope openid?)", slot)
	}
	idt, err := provider.Verifier(&oidc.Config{ClientID: call.Provider.ClientID, Now: call.Now}).Verify(pctx, raw)
	if err != nil {
		return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonToken, "%s ID token: %v", slot, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonToken, "%s ID token: the nonce is not the flow's", slot)
	}
	if idt.Subject == "" || len(idt.Subject) > maxSubject || !text.Valid(idt.Subject) {
		return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonToken, "%s ID token: unusable subject", slot)
	}
	var claims struct {
		Email         string   `json:"email"`
		EmailVerified flexBool `json:"email_verified"`
		Name          string   `json:"name"`
		GivenName     string   `json:"given_name"`
		FamilyName    string   `json:"family_name"`
	}
	if err := idt.Claims(&claims); err != nil {
		return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonToken, "%s ID token claims: %v", slot, err)
	}
	if claims.Email == "" && provider.UserInfoEndpoint() != "" {
		info, err := provider.UserInfo(pctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return app.ProviderIdentity{}, app.ProviderRefusal(app.ProviderReasonUnreachable, "%s userinfo: %v", slot, err)
		}
		// Userinfo of another subject would be another person's address.
		if info.Subject == idt.Subject {
			claims.Email, claims.EmailVerified = info.Email, flexBool(info.EmailVerified)
		}
	}
	return app.ProviderIdentity{Subject: idt.Subject, Email: claims.Email, EmailVerified: bool(claims.EmailVerified),
		Name: claims.Name, GivenName: claims.GivenName, FamilyName: claims.FamilyName}, nil
}

// flexBool reads a JSON boolean, or the strings "true" and "false" some providers send instead.
type flexBool bool

// UnmarshalJSON implements json.Unmarshaler.
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
