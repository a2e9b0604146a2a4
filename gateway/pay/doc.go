// Package pay is the edge's hosted payment page and return page. Route 10 answers a link to the
// payment page; the page checks the link (billing compares hash and state in constant time), binds
// the caller's state to this browser in a short-lived cookie and forwards to the provider's
// checkout. The provider sends the browser back to the return page, which has billing settle the
// session from the provider's own object and forwards to the app's payment return URL. Neither page
// renders a form: every state change is billing's, keyed by the session, so a forged or repeated
// request changes nothing that the provider did not report. The error card they show instead of
// forwarding speaks the language the link or the browser names (webpage.NewCard), else the app's
// default, and wears the app's branding, which identity names for the link's client_id (the state
// cookie carries it to the return page); a link of no known app keeps the neutral look.
package pay
