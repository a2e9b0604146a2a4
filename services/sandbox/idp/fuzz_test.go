package idp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/berthhq/berth/services/sandbox/idp"
)

// FuzzEveryEndpointAnswersBadInputWithoutAServerError sends arbitrary bytes as the query or
// body of each endpoint: whatever arrives, the answer is a 2xx, 3xx or 4xx, never a 5xx or a
// panic, and HTML pages stay valid UTF-8.
func FuzzEveryEndpointAnswersBadInputWithoutAServerError(f *testing.F) {
	sb := idp.New(idp.Config{BaseURL: "http://idp.test", Log: slog.New(slog.DiscardHandler)})
	if _, err := sb.RegisterClient("idpA", idp.Client{ClientID: "app-1", ClientSecret: secret, RedirectURIs: []string{redirectURI}}); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"", "client_id=app-1&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback&response_type=code&scope=openid&code_challenge=" + challenge + "&code_challenge_method=S256",
		"grant_type=authorization_code&code=x&client_id=app-1&client_secret=" + secret, "request=x&action=allow&email=a%40example.com",
		"%zz", "state=%ff%fe", `{"clientId":"a","redirectUris":["https://x.example/"]}`, `{"delayMs":1e99}`, "\x00\xff",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		for _, c := range []struct{ method, path, contentType string }{
			{"GET", "/idpA/authorize?", ""},
			{"POST", "/idpA/authorize", "application/x-www-form-urlencoded"},
			{"POST", "/idpA/token", "application/x-www-form-urlencoded"},
			{"GET", "/idpA/userinfo", ""},
			{"POST", "/idpA/clients", "application/json"},
			{"POST", "/idpA/faults", "application/json"},
			{"POST", "/idpA/keys/rotate", "application/json"},
		} {
			target := c.path
			var body io.Reader
			if c.method == "GET" {
				target += strings.ReplaceAll(strings.ReplaceAll(input, "#", "%23"), " ", "%20")
			} else {
				body = strings.NewReader(input)
			}
			req, err := http.NewRequest(c.method, "http://idp.test"+target, body)
			if err != nil {
				continue // not a request a client could send
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.path == "/idpA/userinfo" {
				req.Header.Set("Authorization", "Bearer "+strings.ToValidUTF8(strings.Map(func(r rune) rune {
					if r < 0x20 || r == 0x7f {
						return -1
					}
					return r
				}, input), ""))
			}
			rec := httptest.NewRecorder()
			sb.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s with %q: %d %s", c.method, c.path, input, rec.Code, rec.Body)
			}
			if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") && !utf8.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s %s with %q: the page is not UTF-8", c.method, c.path, input)
			}
		}
		if err := sb.SetFaults("idpA", idp.Faults{}); err != nil { // a fault set the input made must not leak into the next
			t.Fatal(err)
		}
	})
}
