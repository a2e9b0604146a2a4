package recovery

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/text"
)

// FuzzRecoveryForm posts arbitrary form bodies and link queries to the pages, with a valid CSRF
// pair so that submissions reach identity. The pages must never answer 5xx, must always answer
// HTML, and whatever they send identity must marshal and pass the text rule.
func FuzzRecoveryForm(f *testing.F) {
	for _, s := range []struct{ query, body string }{
		{"client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s", "client_id=app&redirect_uri=x&state=s&step=email&email=a%00%40example.com"},
		{"token=%ff", "step=password&token=%00&password=correct+horse+battery"},
		{"", "client_id=app&redirect_uri=x&state=s&step=code&flow=%c3%28&code=123456"},
		{"", "client_id=app&redirect_uri=x&state=s&step=code&flow=f&code=%1b"},
		{"", "client_id=app&redirect_uri=x&state=s&step=password&flow=f&code=1&password=%00%01"},
		{"", "step=nothing"},
		{"client_id=app;x", "client_id=app&redirect_uri=x&state=s&email=%zz"},
	} {
		f.Add(s.query, s.body)
	}
	f.Fuzz(func(t *testing.T, query, body string) {
		p, fake, _ := newPage()
		token := open(t, p, request()).cookie
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req := httptest.NewRequestWithContext(t.Context(), method, Path, strings.NewReader(body+"&csrf_token="+token.Value))
			req.URL.RawQuery = query
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(token)
			req.RemoteAddr = "203.0.113.9:51234"
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s ?%q %q answered %d", method, query, body, rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusSeeOther && ct != "text/html; charset=utf-8" {
				t.Fatalf("%s ?%q %q: Content-Type %q", method, query, body, ct)
			}
		}
		fake.mu.Lock()
		defer fake.mu.Unlock()
		var sent []proto.Message
		for _, m := range fake.starts {
			sent = append(sent, m)
		}
		for _, m := range fake.checks {
			sent = append(sent, m)
		}
		for _, m := range fake.completes {
			sent = append(sent, m)
		}
		for _, m := range sent {
			if _, err := proto.Marshal(m); err != nil {
				t.Fatalf("the pages sent identity a message gRPC cannot marshal: %v", err)
			}
			if err := text.Message(m); err != nil {
				t.Fatalf("the pages sent identity a message that breaks the text rule: %v", err)
			}
		}
	})
}
