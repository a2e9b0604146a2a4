package emailchange

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/text"
)

// FuzzEmailChangeForm sends arbitrary link queries and form bodies to the page (with a valid
// CSRF pair, so posts reach identity). The page must never answer 5xx, must always answer HTML,
// and every token it passes to identity must pass the text rule.
func FuzzEmailChangeForm(f *testing.F) {
	for _, s := range []struct{ query, body string }{
		{"token=" + linkSecret, "token=" + linkSecret},
		{"token=a%00b", "token=%ff"},
		{"token=a&token=b", "token=a&token=b"},
		{"token=%zz", "token"},
		{"", "token=" + strings.Repeat("x", maxToken+1)},
	} {
		f.Add(s.query, s.body)
	}
	csrfToken := webpage.NewToken()
	f.Fuzz(func(t *testing.T, query, body string) {
		fake := &fakeIdentity{}
		p, _ := newPage(fake)
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req := httptest.NewRequestWithContext(t.Context(), method, Path, strings.NewReader(body+"&"+webpage.CSRFField+"="+csrfToken))
			req.URL.RawQuery = query
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: csrf.Cookie, Value: csrfToken})
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s ?%q %q answered %d", method, query, body, rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Fatalf("%s ?%q %q: Content-Type %q", method, query, body, ct)
			}
		}
		fake.mu.Lock()
		defer fake.mu.Unlock()
		for _, token := range append(fake.describes, fake.confirms...) {
			if !text.Valid(token) || len(token) > maxToken {
				t.Fatalf("identity was sent token %q", token)
			}
		}
	})
}
