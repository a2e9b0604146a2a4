package login

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

const (
	// csrfCookie holds the double-submit token. It is scoped to the page's path: nothing else on
	// the edge reads it but the password-reset pages under it (RecoverPath), which share it.
	csrfCookie = "berth_login_csrf"
	// csrfField is the hidden form field that must repeat the cookie's value.
	csrfField = "csrf_token"
	// csrfBytes of randomness make the token unguessable.
	csrfBytes = 32
)

// newCSRFToken returns a fresh random token.
func newCSRFToken() string {
	b := make([]byte, csrfBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// wellFormed reports whether s looks like a token newCSRFToken made, so a value planted in the
// cookie in another shape is never reused.
func wellFormed(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == csrfBytes
}

// cookieToken is the token in the request's cookie, or "" when there is none of the right shape.
func cookieToken(r *http.Request) string {
	c, err := r.Cookie(csrfCookie)
	if err != nil || !wellFormed(c.Value) {
		return ""
	}
	return c.Value
}

// IssueCSRF returns the token for the form being rendered and sets its cookie. An existing cookie
// token is kept, so several open login tabs stay valid; a new one is minted otherwise.
func IssueCSRF(w http.ResponseWriter, r *http.Request) string {
	token := cookieToken(r)
	if token == "" {
		token = newCSRFToken()
	}
	http.SetCookie(w, &http.Cookie{
		Name:     csrfCookie,
		Value:    token,
		Path:     Path,
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

// ValidCSRF reports whether the posted field repeats the cookie's token, compared in constant time.
func ValidCSRF(r *http.Request) bool {
	cookie := cookieToken(r)
	field := r.PostForm.Get(csrfField)
	return cookie != "" && subtle.ConstantTimeCompare([]byte(cookie), []byte(field)) == 1
}
