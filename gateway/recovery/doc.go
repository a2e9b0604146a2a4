// Package recovery serves the hosted password-reset pages, reached from the sign-in page's
// "Forgot your password?" link (gateway/login) and from the link in the reset mail.
//
// GET /login/recover?client_id&redirect_uri&state[&nonce&scope] shows the email form carrying the
// authorization request. Posting it asks identity to mail a link and a code, and always answers
// the same page ("if an account exists for this address, we sent a link and a code") with a form
// for the code, whether or not the address has an account. A right code, or the mail's link
// (GET /login/recover?token=…, which only shows a form and never changes anything), leads to the
// new-password form; posting that sets the password, ends the user's other sessions and sends the
// browser on to the app's redirect_uri with a code, as a sign-in does.
//
// The pages share the sign-in page's CSRF cookie (it is scoped to /login, which covers them) and
// its reading of the client address. Failures are fixed messages chosen by gRPC code; a wrong,
// spent, expired or unknown link or code all get one text, so nothing tells a visitor whether an
// address has an account.
package recovery
