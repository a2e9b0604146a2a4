package webpage

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// CSRFField is the hidden form field that must repeat the CSRF cookie's value.
const CSRFField = "csrf_token"

// tokenBytes of randomness make a token unguessable.
const tokenBytes = 32

// CSRF is a hosted page's double-submit protection: a random token in a cookie scoped to the
// page's path, which the posted form must repeat. Each page has its own cookie, so nothing else on
// the edge reads it.
type CSRF struct {
	Cookie string // the cookie's name
	Path   string // the page's path, the cookie's scope
}

// NewToken returns a fresh URL-safe random token: the CSRF tokens of every hosted page, and the
// state and nonce of the account page's sign-in.
func NewToken() string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// WellFormedToken reports whether s looks like a token NewToken made, so a value planted in a
// cookie in another shape is never reused.
func WellFormedToken(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == tokenBytes
}

// cookieToken is the token in the request's cookie, or "" when there is none of the right shape.
func (c CSRF) cookieToken(r *http.Request) string {
	k, err := r.Cookie(c.Cookie)
	if err != nil || !WellFormedToken(k.Value) {
		return ""
	}
	return k.Value
}

// Issue returns the token for the form being rendered and sets its cookie. An existing cookie
// token is kept, so several open tabs of the page stay valid; a new one is minted otherwise.
func (c CSRF) Issue(w http.ResponseWriter, r *http.Request) string {
	token := c.cookieToken(r)
	if token == "" {
		token = NewToken()
	}
	http.SetCookie(w, &http.Cookie{
		Name:     c.Cookie,
		Value:    token,
		Path:     c.Path,
		HttpOnly: true,
		// Strict: the cookie never travels with a request another site starts, which is the
		// point of the check. The form posts to the page's own origin, so it always has it.
		SameSite: http.SameSiteStrictMode,
		// Secure whenever the page itself came over TLS; over plain HTTP (local runs) a Secure
		// cookie would never come back.
		Secure: r.TLS != nil,
	})
	return token
}

// Valid reports whether the posted field (r.PostForm, parsed already) repeats the cookie's
// token, compared in constant time.
func (c CSRF) Valid(r *http.Request) bool {
	cookie := c.cookieToken(r)
	field := r.PostForm.Get(CSRFField)
	return cookie != "" && subtle.ConstantTimeCompare([]byte(cookie), []byte(field)) == 1
}
