package contract

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// pageSubmit opens the hosted login page like a browser (keeping its CSRF cookie) and posts its
// form of type typ with email and password; it returns the answer, not following redirects.
func (e *env) pageSubmit(t *testing.T, typ, email, password string) *http.Response {
	t.Helper()
	_, res, _ := e.hostedSubmit(t, typ, email, password)
	return res
}

// hostedSubmit is pageSubmit that also returns the client holding the page's cookies and the
// answer's body, for the steps after the form (the second factor).
func (e *env) hostedSubmit(t *testing.T, typ, email, password string) (*http.Client, *http.Response, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	params := url.Values{"client_id": {e.demo.AppID}, "redirect_uri": {e.demo.RedirectURI}, "state": {strings.Repeat("s", 64)}, "type": {typ}}
	res, err := client.Get(e.stack.BaseURL + "/login?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(page)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("login page: %d %s", res.StatusCode, page)
	}
	form := url.Values{"csrf_token": {string(m[1])}, "email": {email}, "password": {password}}
	for k, v := range params {
		form[k] = v
	}
	res, err = client.PostForm(e.stack.BaseURL+"/login", form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return client, res, string(body)
}

// wantTooMany checks the page's answer to a limit: 429 with Retry-After, and never cached.
func wantTooMany(t *testing.T, what string, res *http.Response) {
	t.Helper()
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429", what, res.StatusCode)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s <= 0 {
		t.Errorf("%s: Retry-After = %q", what, res.Header.Get("Retry-After"))
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control = %q, want no-store", what, res.Header.Get("Cache-Control"))
	}
}

// The hosted page answers the limits with a 429 page: ten sign-ups an hour from one address, ten
// wrong passwords per email from one address. Every page is Cache-Control: no-store.
func TestLoginPageAnswersLimitsWith429(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			for i := range 10 {
				res := e.pageSubmit(t, "signUp", "page"+strconv.Itoa(i)+"@example.com", "correct horse battery staple")
				if res.StatusCode != http.StatusSeeOther || res.Header.Get("Cache-Control") != "no-store" {
					t.Fatalf("sign-up %d: %d, Cache-Control %q", i, res.StatusCode, res.Header.Get("Cache-Control"))
				}
			}
			wantTooMany(t, "eleventh sign-up from the address", e.pageSubmit(t, "signUp", "page-more@example.com", "correct horse battery staple"))

			for i := range 10 {
				if res := e.pageSubmit(t, "signIn", "page0@example.com", "wrong password!"); res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("wrong password %d: %d", i, res.StatusCode)
				}
			}
			wantTooMany(t, "sign-in after ten wrong passwords", e.pageSubmit(t, "signIn", "page0@example.com", "correct horse battery staple"))
		})
	}
}
