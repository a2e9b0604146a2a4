// Package idp is a sandbox of OpenID Connect providers for offline development and tests: a
// real, standards-conforming provider of the authorization code flow, which a relying party
// (Berth's federation, or any OIDC client library) talks to exactly as it would to a hosted one.
//
// One Server acts as many independent providers, one per path segment under its base URL: the
// provider "idpA" has the issuer <base>/idpA, its discovery document at
// <base>/idpA/.well-known/openid-configuration, and clients, keys, codes, tokens and fault knobs
// of its own. A provider comes into being the first time a request names it, as a pspx account
// does with its first key, so tests isolate themselves by naming providers of their own
// (idpA-<random>); idpA…idpD are the names development uses.
//
// Each provider serves discovery, JWKS (RS256; a rotation keeps the previous key published for a
// while), the authorization endpoint (code flow only, PKCE S256 required, state and nonce echoed,
// redirect_uri compared exactly with the client's registered ones) with a hosted page where the
// tester types or picks the signed-in identity and whether its email is verified, or denies
// consent, the token endpoint (client_secret_basic and client_secret_post; codes single-use and
// valid one minute of sandbox time) and userinfo. A request without the openid scope is plain
// OAuth 2.0: its token answer carries no ID token and userinfo still answers.
//
// Clients, faults (token endpoint errors, delays, ID tokens with a bad signature or the wrong
// issuer) and key rotation are set through small JSON endpoints beside the protocol's, with no
// authentication, like the payment sandboxes' controls. Time is the shared sandbox clock: an
// advance expires codes, tokens and retired keys, and ID tokens are dated in sandbox time.
package idp
