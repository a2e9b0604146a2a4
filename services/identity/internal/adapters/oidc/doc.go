// Package oidc is identity's outbound adapter to the apps' identity providers (app.ProviderClient):
// OpenID Connect discovery, the authorization URL of the code flow with PKCE (S256), the code
// exchange and the ID token's verification (signature through the provider's JWKS, issuer,
// audience, expiry, nonce), with golang.org/x/oauth2 and github.com/coreos/go-oidc/v3. A
// provider's discovery and keys are reused for an hour while its slot is unchanged; a key the
// provider rotated in is fetched when a token names it. Every failure is a provider refusal with
// its reason (app.ProviderReason*), never an internal error.
package oidc
