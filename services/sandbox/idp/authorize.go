package idp

import (
	"crypto/rand"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// supportedScopes are the scopes the provider knows: openid makes the flow OpenID Connect (an ID
// token), email and profile add the claims they name.
var supportedScopes = []string{"openid", "email", "profile"}

var (
	// challengeFormat is an S256 code challenge: the base64url of a SHA-256, without padding.
	challengeFormat = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	subFormat       = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)
)

// Limits of what the authorization request and the page carry.
const (
	maxOpaque = 1024 // state and nonce
	maxEmail  = 254
	maxName   = 200
)

// presets are the identities the page offers to pick before anyone signed in at the provider:
// one whose email the provider vouches for and one whose email it does not.
var presets = []identity{
	{Email: "tester@example.com", Name: "Test User", EmailVerified: true},
	{Email: "unverified@example.com", Name: "Unverified User"},
}

// authRequest is an authorization request shown on the page, waiting for the tester's answer.
type authRequest struct {
	id, client, redirectURI, state, nonce, challenge, loginHint string
	scopes                                                      []string
	expires                                                     time.Time
}

// authorizePage is what the hosted page shows.
type authorizePage struct {
	Provider, Client, Request string
	Scopes                    []string
	Error                     string
	Typed                     identity // the form's values: the login hint, or what was typed before an error
	Known                     []identity
}

// errorPage is the page for a request the provider cannot send back to the client.
type errorPage struct{ Provider, Message string }

// authorize serves GET /{p}/authorize: it checks the request (OpenID Connect Core 3.1.2.1 with
// RFC 7636) and shows the page. An unknown client or a redirect URI the client did not register
// gets the error page, since sending the browser there could make the provider an open
// redirector; every other mistake goes back to the redirect URI as an OAuth error.
func (s *Server) authorize(p *provider, w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		renderPage(w, s.log, http.StatusBadRequest, "error", errorPage{p.name, "The authorization request's query string is not valid URL encoding."})
		return
	}
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	p.mu.Lock()
	c := p.clients[clientID]
	registered := c != nil && slices.Contains(c.redirectURIs, redirectURI)
	p.mu.Unlock()
	switch {
	case c == nil:
		renderPage(w, s.log, http.StatusBadRequest, "error", errorPage{p.name, "The app that sent you here is not a registered client of this provider (client_id)."})
		return
	case !registered:
		renderPage(w, s.log, http.StatusBadRequest, "error", errorPage{p.name, "The redirect_uri is not one the client registered, so this provider will not send you back there."})
		return
	}
	req := &authRequest{
		id: rand.Text(), client: clientID, redirectURI: redirectURI, state: q.Get("state"), nonce: q.Get("nonce"),
		challenge: q.Get("code_challenge"), loginHint: q.Get("login_hint"), scopes: strings.Fields(q.Get("scope")),
		expires: s.clock.Now().Add(pendingLifetime),
	}
	fail := func(code, description string) {
		http.Redirect(w, r, p.redirect(req, url.Values{"error": {code}, "error_description": {description}}), http.StatusFound)
	}
	for k, v := range q {
		if len(v) > 1 {
			fail("invalid_request", "the parameter "+k+" appears more than once")
			return
		}
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only the authorization code flow is offered: response_type=code")
	case len(req.scopes) == 0 || slices.ContainsFunc(req.scopes, func(sc string) bool { return !slices.Contains(supportedScopes, sc) }):
		fail("invalid_scope", "scope must name some of openid, email and profile")
	case q.Get("code_challenge_method") != "S256" || req.challenge == "":
		fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
	case !challengeFormat.MatchString(req.challenge):
		fail("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code verifier")
	case !opaqueOK(req.state) || !opaqueOK(req.nonce):
		fail("invalid_request", "state and nonce must be at most 1024 characters of valid UTF-8 without control characters")
	case q.Get("prompt") == "none":
		fail("login_required", "the sandbox always asks the tester who signs in")
	default:
		now := s.clock.Now()
		p.mu.Lock()
		p.prune(now)
		full := len(p.requests) >= maxPending
		if !full {
			p.requests[req.id] = req
		}
		p.mu.Unlock()
		if full {
			fail("temporarily_unavailable", "the provider has too many sign-ins waiting on its page")
			return
		}
		s.showAuthorize(p, w, req, http.StatusOK, "", identity{Email: hint(req.loginHint), EmailVerified: true})
	}
}

// hint is the login hint when it can be an email address to fill in, else "".
func hint(h string) string {
	if checkEmail(h) != "" {
		return ""
	}
	return h
}

func opaqueOK(v string) bool {
	return len(v) <= maxOpaque && utf8.ValidString(v) && !strings.ContainsFunc(v, isControl)
}

// redirect is the client's redirect URI with the answer's parameters, the request's state and
// the issuer (RFC 9207) added to its own query.
func (p *provider) redirect(req *authRequest, params url.Values) string {
	u, _ := url.Parse(req.redirectURI) // a registered URI, which parsed at registration
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if req.state != "" {
		q.Set("state", req.state)
	}
	q.Set("iss", p.issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

func (s *Server) showAuthorize(p *provider, w http.ResponseWriter, req *authRequest, status int, problem string, typed identity) {
	d := authorizePage{Provider: p.name, Client: req.client, Request: req.id, Scopes: req.scopes, Error: problem, Typed: typed}
	p.mu.Lock()
	for _, who := range p.people {
		d.Known = append(d.Known, *who)
	}
	p.mu.Unlock()
	for _, pre := range presets {
		if !slices.ContainsFunc(d.Known, func(k identity) bool { return k.Email == pre.Email }) {
			d.Known = append(d.Known, pre)
		}
	}
	slices.SortFunc(d.Known, func(a, b identity) int { return strings.Compare(a.Email, b.Email) })
	renderPage(w, s.log, status, "authorize", d)
}

// answerAuthorize serves the page's form: the tester allows (as the identity typed or picked) or
// denies, and the browser goes back to the client's redirect URI with a code or access_denied.
func (s *Server) answerAuthorize(p *provider, w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		renderPage(w, s.log, http.StatusBadRequest, "error", errorPage{p.name, "The form could not be read. Start again from the app."})
		return
	}
	now := s.clock.Now()
	p.mu.Lock()
	req := p.requests[r.PostForm.Get("request")]
	if req != nil && !now.Before(req.expires) {
		req = nil
	}
	p.mu.Unlock()
	if req == nil {
		renderPage(w, s.log, http.StatusBadRequest, "error", errorPage{p.name, "This sign-in request is unknown, expired or already answered. Start again from the app."})
		return
	}
	f := r.PostForm
	if f.Get("action") == "deny" {
		p.mu.Lock()
		delete(p.requests, req.id)
		p.mu.Unlock()
		s.log.Info("idp sandbox: consent denied", "provider", p.name, "client", req.client)
		http.Redirect(w, r, p.redirect(req, url.Values{"error": {"access_denied"}, "error_description": {"the user denied the request"}}), http.StatusSeeOther)
		return
	}
	who := identity{Email: strings.TrimSpace(f.Get("email")), Name: strings.TrimSpace(f.Get("name")), Sub: strings.TrimSpace(f.Get("sub")),
		EmailVerified: f.Get("email_verified") == "true"}
	problem := checkEmail(who.Email)
	switch {
	case problem != "":
	case len(who.Name) > maxName || !utf8.ValidString(who.Name) || strings.ContainsFunc(who.Name, isControl):
		problem = "The name can be at most 200 characters, without control characters."
	case who.Sub != "" && !subFormat.MatchString(who.Sub):
		problem = "The subject can be left empty, or 1 to 255 letters, digits, '.', '_' or '-'."
	}
	if problem != "" {
		if !utf8.ValidString(who.Email) || !utf8.ValidString(who.Name) {
			who = identity{} // what cannot be shown again is not
		}
		s.showAuthorize(p, w, req, http.StatusUnprocessableEntity, problem, who)
		return
	}
	code, status, refusal := p.allow(req, who, now)
	if refusal != "" {
		renderPage(w, s.log, status, "error", errorPage{p.name, refusal})
		return
	}
	s.log.Info("idp sandbox: code issued", "provider", p.name, "client", req.client, "sub", who.Sub)
	http.Redirect(w, r, p.redirect(req, url.Values{"code": {code}}), http.StatusSeeOther)
}

// allow turns an answered request into a code for who, giving who the subject the provider knows
// them by (the one typed, else the one their email had, else a new one). It refuses when
// the request was answered meanwhile or the provider holds too much already, with the status and
// message of the error page.
func (p *provider) allow(req *authRequest, who identity, now time.Time) (code string, status int, refusal string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.requests[req.id] == nil { // answered in another tab meanwhile
		return "", http.StatusBadRequest, "This sign-in request was already answered. Start again from the app."
	}
	p.prune(now)
	known := p.people[who.Email]
	if len(p.codes) >= maxPending || (known == nil && len(p.people) >= maxPending) {
		return "", http.StatusServiceUnavailable, "The provider holds too many sign-ins. Restart the sandbox."
	}
	switch {
	case who.Sub != "":
	case known != nil:
		who.Sub = known.Sub
	default:
		who.Sub = strings.ToLower(rand.Text())
	}
	p.people[who.Email] = &who
	delete(p.requests, req.id)
	code = rand.Text()
	p.codes[code] = &grant{
		client: req.client, redirectURI: req.redirectURI, challenge: req.challenge, nonce: req.nonce,
		scopes: req.scopes, who: who, authTime: now, expires: now.Add(codeLifetime),
	}
	return code, 0, ""
}

// checkEmail says what is wrong with an address typed on the page, or "".
func checkEmail(e string) string {
	if e == "" {
		return "Enter the email address to sign in with."
	}
	a, err := mail.ParseAddress(e)
	if len(e) > maxEmail || !utf8.ValidString(e) || strings.ContainsFunc(e, isControl) || err != nil || a.Address != e || a.Name != "" {
		return "Enter an email address like someone@example.com (at most 254 characters)."
	}
	return ""
}
