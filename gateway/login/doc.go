// Package login serves Berth's hosted login page: the authorization step of the token flow.
//
// GET /login?client_id&state&type=signIn|signUp&redirect_uri[&nonce&scope&referral] checks the app and the
// redirect URI with the identity service and renders a server-side HTML form; POST /login signs the
// end user up or in and sends the browser to redirect_uri?code&state&... with a 303. Everything is
// rendered here (html/template, inline CSS, no scripts, no external assets), so the page works
// under a Content-Security-Policy that allows nothing but its own styles and form posts (and, for
// an app with a logo, images from the logo's origin).
//
// For each identity provider the app configured (idpA…idpD) the forms show a "Continue with …"
// link to ProviderPath, which starts identity's code flow and keeps its sealed flow in a Lax
// cookie; the provider returns to ProviderCallbackPath, which continues the authorization request
// or, for an address that has an account, shows the link confirmation (ProviderLinkPath): one
// form per proof the account offers (its password, an authenticator code, a passkey) and a code
// mailed to the address, which every account can receive. Provider failures end on the error
// card with a fixed text by reason.
//
// A sign-in under the app's required MFA policy by a user without a second factor enrols one on
// the second step (SecondFactorPath): the TOTP key with its QR code, or a passkey the browser
// creates; both continue the authorization request after the recovery codes.
//
// The page speaks English or German (webpage.Language: the link's language or lng, which the form
// carries on, then Accept-Language, then the app's default language) with every text from
// pkg/locale, and shows the app's branding (display name, accent colour, logo) that DescribeLogin
// returns.
//
// The form is protected against cross-site request forgery (including login CSRF) with a
// double-submit token: a random value in a SameSite=Strict, HttpOnly cookie and in a hidden field,
// compared in constant time. Failures are shown with fixed, generic messages chosen by gRPC code,
// never the backend's text, so the page reveals nothing about which accounts exist. A reached
// attempt limit answers 429 and an unavailable backend 503, each with Retry-After when the backend
// said how long to wait.
package login
