// Package browser holds the browser test: it starts the whole stack, opens the hosted login page in
// headless Chromium, signs up through the real form and follows the redirect to a test app, which
// then exchanges the authorization code for tokens over HTTP — the path a real user and app take.
//
// A second test is the browser SDK's path: the app's page, served from another origin (another
// loopback port), receives the redirect and calls Berth cross-origin with fetch() — the code
// exchange and /v1/users/me — in Chromium with web security on, so the real CORS checks
// (preflights included) decide; a page on an origin the app does not allow must fail to read.
// The page uses fetch() rather than the published SDK, so that it makes each cross-origin call
// itself; the SDK runs in a page in the example app's test.
//
// A third opens the API reference (/docs/api) as a person reading it would: its contents must lead
// to the operations, and the page must load nothing from another origin and break no rule of its
// Content-Security-Policy (reported by the page's securitypolicyviolation events and the console).
//
// Another drives the example app the all-in-one serves at /dev/example (examples/webapp): a static
// page on the published SDK, installed from npm with the folder's lockfile (npm ci into a copy of
// the folder, so the repository never holds a node_modules), signs a user up through the hosted page
// and shows the user's email and tenant. Without node or npm it skips like the Chromium tests.
//
// The password-reset test signs a user up, then follows "Forgot your password?" from the sign-in
// page, reads the mail in the development mailbox (/dev/mailbox), opens its link, sets a new
// password and lands on the app with a code; the refresh token from before the reset is refused
// and the new password signs in, on memory and on Postgres.
//
// The identity provider sandbox's test serves the sandboxes alone (no stack) and drives a
// provider's hosted authorize page: a typed identity with its email unticked as unverified, a
// preset one picked with one click, and a denial; the app behind the redirect URI exchanges each
// code with x/oauth2 and verifies the ID token with go-oidc.
//
// The test needs Chromium at /usr/bin/chromium. When it is missing and the test runs as root, it
// installs it with apt-get; otherwise it skips, or fails under CI=true.
package browser
