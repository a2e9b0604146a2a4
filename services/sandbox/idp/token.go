package idp

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// verifierFormat is a PKCE code verifier (RFC 7636 4.1).
var verifierFormat = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// oauthError is the token and userinfo endpoints' error body (RFC 6749 5.2).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// tokenAnswer is a successful token response (RFC 6749 5.1, OpenID Connect Core 3.1.3.3).
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	IDToken     string `json:"id_token,omitempty"`
	Scope       string `json:"scope"`
}

// idClaims are an ID token's claims.
type idClaims struct {
	Issuer       string `json:"iss"`
	Subject      string `json:"sub"`
	Audience     string `json:"aud"`
	AuthorizedBy string `json:"azp"`
	Expiry       int64  `json:"exp"`
	IssuedAt     int64  `json:"iat"`
	AuthTime     int64  `json:"auth_time"`
	Nonce        string `json:"nonce,omitempty"`
	AccessHash   string `json:"at_hash"`
	profileClaims
}

// profileClaims are the claims about the person that the scopes ask for, in the ID token and
// from userinfo alike.
type profileClaims struct {
	Email         string `json:"email,omitempty"`
	EmailVerified *bool  `json:"email_verified,omitempty"`
	Name          string `json:"name,omitempty"`
}

// token serves POST /{p}/token: an authorization code, its PKCE verifier and the client's
// credentials (HTTP Basic or client_id and client_secret in the form, not both) for an access
// token and, when openid was asked for, an ID token. A code is spent the first time its client
// presents it, whatever the outcome; presented again, it also revokes the token it was redeemed
// for (RFC 6749 4.1.2).
func (s *Server) token(p *provider, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Pragma", "no-cache")
	if !p.delay(r.Context()) {
		return
	}
	p.mu.Lock()
	fault := p.faults.TokenError
	p.mu.Unlock()
	if fault != "" {
		writeJSON(w, tokenErrorStatus[fault], oauthError{fault, "the sandbox's tokenError fault is on"})
		return
	}
	form, oerr := readForm(w, r)
	if oerr != nil {
		writeJSON(w, http.StatusBadRequest, oerr)
		return
	}
	id, secret, basic, oerr := clientCredentials(r, form)
	if oerr != nil {
		writeJSON(w, tokenErrorStatus[oerr.Error], oerr)
		return
	}
	now := s.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[id]; c == nil || !c.secretMatches(secret) {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+p.issuer+`"`)
		}
		writeJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", "unknown client or wrong client secret"})
		return
	}
	answer, oerr := p.redeem(id, form, now)
	if oerr != nil {
		s.log.Info("idp sandbox: token refused", "provider", p.name, "client", id, "error", oerr.Error, "why", oerr.Description)
		writeJSON(w, http.StatusBadRequest, oerr)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// readForm reads the token request's form body; every parameter may appear once.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *oauthError) {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		return nil, &oauthError{"invalid_request", "send the parameters as application/x-www-form-urlencoded"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		return nil, &oauthError{"invalid_request", "the form could not be read"}
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return nil, &oauthError{"invalid_request", "the parameter " + k + " appears more than once"}
		}
	}
	return r.PostForm, nil
}

// clientCredentials reads the client's id and secret from HTTP Basic, whose parts are form-encoded
// (RFC 6749 2.3.1), or from the form.
func clientCredentials(r *http.Request, form url.Values) (id, secret string, basic bool, _ *oauthError) {
	bid, bsecret, basic := r.BasicAuth()
	if !basic {
		if form.Get("client_id") == "" {
			return "", "", false, &oauthError{"invalid_client", "authenticate the client with HTTP Basic or client_id and client_secret"}
		}
		return form.Get("client_id"), form.Get("client_secret"), false, nil
	}
	if form.Has("client_secret") {
		return "", "", true, &oauthError{"invalid_request", "use one way of authenticating the client, not HTTP Basic and client_secret both"}
	}
	id, err1 := url.QueryUnescape(bid)
	secret, err2 := url.QueryUnescape(bsecret)
	if err1 != nil || err2 != nil {
		return "", "", true, &oauthError{"invalid_request", "the HTTP Basic credentials are not form-encoded"}
	}
	if form.Has("client_id") && form.Get("client_id") != id {
		return "", "", true, &oauthError{"invalid_request", "client_id differs from the HTTP Basic user"}
	}
	return id, secret, true, nil
}

func (c *client) secretMatches(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], c.secretHash[:]) == 1
}

// redeem exchanges the form's code for tokens. The caller holds p.mu.
func (p *provider) redeem(clientID string, form url.Values, now time.Time) (*tokenAnswer, *oauthError) {
	if gt := form.Get("grant_type"); gt != "authorization_code" {
		return nil, &oauthError{"unsupported_grant_type", "only grant_type=authorization_code is offered"}
	}
	if form.Get("code") == "" {
		return nil, &oauthError{"invalid_request", "code is missing"}
	}
	g := p.codes[form.Get("code")]
	switch {
	case g == nil || g.client != clientID:
		return nil, &oauthError{"invalid_grant", "unknown code, or a code issued to another client"}
	case g.spent:
		delete(p.tokens, g.accessToken)
		return nil, &oauthError{"invalid_grant", "the code was presented before; the token it was redeemed for is revoked"}
	}
	g.spent = true
	switch {
	case !now.Before(g.expires):
		return nil, &oauthError{"invalid_grant", "the code expired"}
	case form.Get("redirect_uri") != g.redirectURI:
		return nil, &oauthError{"invalid_grant", "redirect_uri differs from the authorization request's"}
	case !verifierFormat.MatchString(form.Get("code_verifier")):
		return nil, &oauthError{"invalid_grant", "code_verifier is missing or not 43 to 128 unreserved characters"}
	case !pkceMatches(form.Get("code_verifier"), g.challenge):
		return nil, &oauthError{"invalid_grant", "code_verifier does not match the code_challenge"}
	}
	if len(p.tokens) >= maxPending {
		p.prune(now)
		if len(p.tokens) >= maxPending {
			return nil, &oauthError{"temporarily_unavailable", "the provider holds too many tokens; restart the sandbox"}
		}
	}
	access := rand.Text() + rand.Text()
	g.accessToken = access
	p.tokens[access] = &grant{client: g.client, scopes: g.scopes, who: g.who, expires: now.Add(tokenLifetime)}
	answer := &tokenAnswer{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(tokenLifetime / time.Second), Scope: strings.Join(g.scopes, " ")}
	if slices.Contains(g.scopes, "openid") {
		idToken, err := p.sign(p.idClaims(g, access, now))
		if err != nil {
			return nil, &oauthError{"server_error", err.Error()}
		}
		answer.IDToken = idToken
	}
	return answer, nil
}

// pkceMatches compares the verifier's S256 challenge with the request's, in constant time.
func pkceMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// idClaims are the ID token's claims for the grant g, with the wrong-issuer fault applied.
func (p *provider) idClaims(g *grant, access string, now time.Time) idClaims {
	sum := sha256.Sum256([]byte(access))
	c := idClaims{
		Issuer: p.issuer, Subject: g.who.Sub, Audience: g.client, AuthorizedBy: g.client,
		Expiry: now.Add(tokenLifetime).Unix(), IssuedAt: now.Unix(), AuthTime: g.authTime.Unix(), Nonce: g.nonce,
		AccessHash:    base64.RawURLEncoding.EncodeToString(sum[:sha256.Size/2]),
		profileClaims: g.profile(),
	}
	if p.faults.WrongIssuer {
		c.Issuer = p.issuer + "-not-this-provider"
	}
	return c
}

// profile is what the grant's scopes ask for: email and email_verified for email, name for
// profile.
func (g *grant) profile() profileClaims {
	var c profileClaims
	if slices.Contains(g.scopes, "email") {
		v := g.who.EmailVerified
		c.Email, c.EmailVerified = g.who.Email, &v
	}
	if slices.Contains(g.scopes, "profile") {
		c.Name = g.who.Name
	}
	return c
}

// userinfo serves the UserInfo endpoint (OpenID Connect Core 5.3) for an access token sent as a
// Bearer token.
func (s *Server) userinfo(p *provider, w http.ResponseWriter, r *http.Request) {
	if !p.delay(r.Context()) {
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	now := s.clock.Now()
	p.mu.Lock()
	g := p.tokens[token]
	p.mu.Unlock()
	if !ok || g == nil || !now.Before(g.expires) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, oauthError{"invalid_token", "send a valid access token as the Bearer token"})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Subject string `json:"sub"`
		profileClaims
	}{g.who.Sub, g.profile()})
}
