// Package account serves Berth's hosted account page: GET /account?client_id=… shows the signed-in
// end user's email address and whether it is verified, a password change form and the user's
// sessions of the app, each with "end", and "end all other sessions"; the second factors (add,
// and remove one after the current password); and the app's identity providers, linked ones with
// "Unlink" and the others with "Link".
//
// The page is an ordinary client of the app. Without its cookie it sends the browser to the hosted
// login page with redirect_uri = the deployment's public URL + "/account/callback" (identity
// accepts that one URI for every enabled app) and a random state and nonce, which a short-lived
// cookie binds to this browser. /account/callback checks the state, exchanges the code through
// identity's token service, ends the session that exchange started at once (the page keeps no
// refresh token, so the session could never be used and would only clutter the user's list) and
// keeps the access token alone in an HttpOnly, SameSite=Strict cookie scoped to /account whose
// Max-Age is the token's remaining life: the page's browser session lasts as long as an access
// token (15 minutes by default), then the page signs in again.
//
// Every state-changing action is a POST form to /account carrying a double-submit CSRF token;
// after it the browser is sent back to the page with a 303, so nothing happens on a GET. "Link"
// (GET ?link=<slot>) only starts the login page's provider flow, whose callback makes the link and
// returns to the page with a notice; it is a link because a form could not redirect to the
// provider's origin under the page's form-action policy. Texts come
// from pkg/locale (English and German, by the link's language/lng, then Accept-Language, then the
// app's default) and the page wears the app's branding, like the login page. Bad input answers the
// page's error card, never a 5xx.
package account
