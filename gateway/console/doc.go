// Package console serves Berth's web console for app owners at /console: project members sign in
// with their email address, password and (once enrolled) a TOTP code or a passkey, and look after their
// project's apps, API keys, members, the apps' users (search, detail, freezing, ending sessions,
// mails, deletion behind the typed address), tenants (search, billing state, freezing) and billing
// (connections, catalog, promotion codes, referral reward), and read each app's analytics as
// charts drawn on the server (gateway/webpage/chart) with their tables and CSV files.
//
// The console is a client of the services' gRPC APIs and nothing more. The steps before a member
// has a credential (sign-in, second factor, invitation) go to identity's MemberService with the
// service token, passing the browser's address (trusted proxies as on the hosted login page) so
// identity applies the hosted login's attempt limits; every other call carries the member's
// operator token alone, so the console gets exactly the access the member has over gRPC and no
// business rule lives here. A refused call becomes a message on the page, never a bare 5xx.
//
// The browser session is one cookie, berth_console: the operator token with the times its session
// started and was last used, sealed (pkg/sealbox, AES-256-GCM) under the console's key, HttpOnly,
// SameSite=Strict, Path=/console, Secure except over plain HTTP to a loopback host (a local run).
// It ends after 30 minutes without a request, 12 hours after the sign-in, or when the token
// expires, whichever comes first; signing out ends the token's session at identity too. Every
// change is a POST form carrying the double-submit CSRF token of the hosted pages
// (gateway/webpage), and every page answers under a policy without inline script or style: the
// stylesheet (the hosted pages' own, gateway/webpage.Stylesheet, and the console's additions) and
// the scripts (the copy button; the hosted pages' passkey ceremony, gateway/webpage.PasskeyScript)
// are files under /console/static.
//
// Texts come from pkg/locale (English and German: the link's language parameter, remembered in
// a cookie, then Accept-Language). Pages are server-rendered html/template and work without
// JavaScript.
//
// A page is a handler method of Console registered in routes (routes.go) with the method and path
// pattern the edge mounts (Routes); it reads the path's ids and its form or link through posted or
// queried with a parser (params.go and the areas' own _params.go files) and renders a template of
// pages.html (or of the area's own .html file) inside the "top" and "bottom" templates, which
// carry the navigation.
package console
