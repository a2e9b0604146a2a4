package account

import (
	"crypto/subtle"
	"net/http"

	"github.com/berthhq/berth/gateway/webpage"
)

// csrf is the double-submit protection of the page's forms, the hosted pages' one scheme.
var csrf = webpage.CSRF{Cookie: "berth_account_csrf", Path: Path}

// The page's own cookies, each scoped to Path so nothing else on the edge reads them.
const (
	// flowCookie binds a sign-in's state and nonce to the browser that started it.
	flowCookie = "berth_account_flow"
	// tokenCookie holds the page's access token: its whole browser session.
	tokenCookie = "berth_account"
	// flowMaxAge bounds a sign-in: the hosted login page's form and the code after it.
	flowMaxAge = 15 * 60
)

// equal compares two secrets in constant time.
func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// setCookie sets one of the page's cookies: HttpOnly, SameSite=Strict, under Path, Secure when
// the deployment's public URL is https. maxAge < 0 deletes it.
func setCookie(w http.ResponseWriter, name, value string, maxAge int, secure bool) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: Path, MaxAge: maxAge, HttpOnly: true, Secure: secure,
		// Strict: no request another site starts carries them, which is what the CSRF check and
		// the token cookie rely on.
		SameSite: http.SameSiteStrictMode,
	})
}
