package login

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/text"
)

// FuzzLoginForm posts arbitrary form bodies and link queries to the page (with a valid CSRF
// pair, so submissions reach the backend). The page must never answer 5xx, must always answer
// HTML, and whatever it sends to identity must be marshallable and pass the text rule: a value
// that is not would have been a 500 on the wire (invalid UTF-8) or in Postgres (NUL).
func FuzzLoginForm(f *testing.F) {
	for _, s := range []struct{ query, body string }{
		{"client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s", "client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s&email=a%00%40example.com&password=correct+horse+battery"},
		{"", "client_id=app&redirect_uri=x&state=s&type=signUp&email=a%40example.com&name=%ff&password=correct+horse+battery"},
		{"", "client_id=%c3%28&redirect_uri=x&state=s&email=a&password=p"},
		{"", "client_id=app&redirect_uri=x&state=s%1b&email=a&password=p"},
		{"", "client_id=app&redirect_uri=x&state=s&email=a&password=%00%01"},
		{"client_id=%ff&redirect_uri=x&state=%00", ""},
		{"client_id=app;x", "client_id=app&redirect_uri=x&state=s&email=%zz"},
	} {
		f.Add(s.query, s.body)
	}
	f.Fuzz(func(t *testing.T, query, body string) {
		fake := newFake()
		p, _ := newPage(fake)
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req := httptest.NewRequestWithContext(t.Context(), method, Path, strings.NewReader(body+"&"+webpage.CSRFField+"=tok"))
			req.URL.RawQuery = query
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: csrfCookie, Value: "tok"})
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
		for _, m := range fake.describes {
			sent = append(sent, m)
		}
		for _, m := range fake.signUps {
			sent = append(sent, m)
		}
		for _, m := range fake.signIns {
			sent = append(sent, m)
		}
		sendable(t, sent)
	})
}

// FuzzVerifyForm posts arbitrary bodies (and GETs arbitrary queries) to the verification page,
// with a valid CSRF pair: no 5xx, always HTML, and every message sent to identity marshals and
// passes the text rule.
func FuzzVerifyForm(f *testing.F) {
	for _, s := range []struct{ query, body string }{
		{"token=abc", "op=link&token=abc"},
		{"token=%ff", "op=link&token=%00"},
		{"", "op=code&client_id=app&redirect_uri=x&state=s&verification=v&code=123456&email=a%40example.com"},
		{"", "op=code&client_id=app&redirect_uri=x&state=s&verification=%c3%28&code=12%0a456"},
		{"", "op=resend&client_id=app&redirect_uri=x&state=s&email=a%1b%40example.com"},
		{"", "op=resend&client_id=app&redirect_uri=x&state=s&type=signUp&email=a%40example.com"},
		{"", "op=nothing"},
	} {
		f.Add(s.query, s.body)
	}
	f.Fuzz(func(t *testing.T, query, body string) {
		fake := newFake()
		fake.verification = "0b8f3c2e-7a4d-4e61-9c1b-2d3e4f5a6b7c"
		p, _ := newPage(fake)
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req := httptest.NewRequestWithContext(t.Context(), method, VerifyPath, strings.NewReader(body+"&"+webpage.CSRFField+"=tok"))
			req.URL.RawQuery = query
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: csrfCookie, Value: "tok"})
			req.RemoteAddr = "203.0.113.9:51234"
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
		var sent []proto.Message
		for _, m := range fake.resends {
			sent = append(sent, m)
		}
		for _, m := range fake.codes {
			sent = append(sent, m)
		}
		for _, m := range fake.links {
			sent = append(sent, m)
		}
		for _, m := range fake.describes {
			sent = append(sent, m)
		}
		sendable(t, sent)
	})
}

// FuzzSecondFactorForm posts arbitrary bodies to the second step of a sign-in, with a valid CSRF
// pair: no 5xx, HTML or a redirect, and every message sent to identity marshals and passes the
// text rule.
func FuzzSecondFactorForm(f *testing.F) {
	for _, s := range []string{
		"client_id=app&redirect_uri=x&state=s&flow=f&code=123456",
		"client_id=app&redirect_uri=x&state=s&flow=f&enrol=1&code=abcde-fghjk",
		"client_id=app&redirect_uri=x&state=s&flow=%00&code=1",
		"client_id=app&redirect_uri=x&state=s&flow=f&code=%ff",
		"client_id=app&redirect_uri=x&state=s&code=123456",
		"client_id=app&redirect_uri=x&flow=f&code=123456",
		"flow=f&code=%zz",
		"client_id=app&redirect_uri=x&state=s&flow=f&passkey=%7B%22id%22%3A%22x%22%7D&passkey_state=s",
		"client_id=app&redirect_uri=x&state=s&flow=f&passkey=%00&passkey_state=%ff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fake := newFake()
		fake.recovery = []string{"abcde-fghjk"}
		fuzzPost(t, fake, SecondFactorPath, body)
	})
}

// fuzzPost posts body to path of a page over fake with a valid CSRF pair and checks the answer
// and every message the page sent identity.
func fuzzPost(t *testing.T, fake *fakeLogin, path, body string) {
	t.Helper()
	p, _ := newPage(fake)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(body+"&"+webpage.CSRFField+"="+tok))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: tok})
	req.RemoteAddr = "203.0.113.9:51234"
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%q answered %d", body, rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusSeeOther && ct != "text/html; charset=utf-8" {
		t.Fatalf("%q: Content-Type %q", body, ct)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	var sent []proto.Message
	for _, m := range fake.factors {
		sent = append(sent, m)
	}
	for _, m := range fake.enrolments {
		sent = append(sent, m)
	}
	for _, m := range fake.passkeySignIns {
		sent = append(sent, m)
	}
	for _, m := range fake.describes {
		sent = append(sent, m)
	}
	sendable(t, sent)
}

// sendable fails the fuzz run when a message the page sent identity could not travel: gRPC cannot
// marshal invalid UTF-8, and Postgres refuses NUL (the text rule).
func sendable(t *testing.T, sent []proto.Message) {
	t.Helper()
	for _, m := range sent {
		if _, err := proto.Marshal(m); err != nil {
			t.Fatalf("the page sent identity a message gRPC cannot marshal: %v", err)
		}
		if err := text.Message(m); err != nil {
			t.Fatalf("the page sent identity a message that breaks the text rule: %v", err)
		}
	}
}

// FuzzPasskeyForm posts arbitrary bodies to the sign-in form's passkey path, with a valid CSRF
// pair: no 5xx, HTML or a redirect, and every message sent to identity marshals and passes the
// text rule.
func FuzzPasskeyForm(f *testing.F) {
	for _, s := range []string{
		"client_id=app&redirect_uri=x&state=s&passkey=%7B%22id%22%3A%22x%22%7D&passkey_state=st",
		"client_id=app&redirect_uri=x&state=s&passkey=%00&passkey_state=%ff",
		"client_id=app&redirect_uri=x&state=s&type=signUp&passkey=p&passkey_state=s",
		"client_id=app&redirect_uri=x&state=s&passkey_state=s",
		"passkey=p&passkey_state=s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fake := newFake()
		fake.signInOptions = `{"challenge":"Y2hhbGxlbmdl"}`
		fuzzPost(t, fake, PasskeyPath, body)
	})
}

// FuzzProviderCallback sends arbitrary callback queries and flow cookies to the provider callback,
// and arbitrary bodies to the link confirmation's forms (linkFormFrom; with a valid CSRF pair).
// The pages must never answer 5xx, and whatever they send to identity must marshal and pass the
// text rule.
func FuzzProviderCallback(f *testing.F) {
	for _, s := range []struct{ query, cookie, body string }{
		{"code=c0de&state=st4te", "sealed-flow", ""},
		{"error=access_denied&error_description=The+user+said+no&state=s", "sealed-flow", ""},
		{"code=%ff&state=%00", "x", "link=l&method=password&password=%00"},
		{"state=s&state=t&code=", "", "link=&method=password&password=p"},
		{"code=c;x&iss=https%3A%2F%2Fidp.example", "a%2Cb", "link=sealed&method=password&password=correct+horse&language=%c3%28"},
		{"", "", "link=sealed&method=email&email_code=123456"},
		{"", "", "link=sealed&method=email&email_code=12%0a456"},
		{"", "", "link=bound-link&method=send"},
		{"", "", "link=sealed&method=code&code=%ff"},
		{"", "", "link=sealed&method=passkey&passkey=%7B%22id%22%3A%22x%22%7D&passkey_state=s"},
		{"", "", "link=sealed&method=passkey&passkey=%00&passkey_state=%ff"},
		{"", "", "link=sealed&method=nothing&password=p"},
	} {
		f.Add(s.query, s.cookie, s.body)
	}
	f.Fuzz(func(t *testing.T, query, cookie, body string) {
		p, fake, _ := newProviderPage()
		for _, r := range []*http.Request{
			httptest.NewRequestWithContext(t.Context(), http.MethodGet, ProviderCallbackPath, nil),
			httptest.NewRequestWithContext(t.Context(), http.MethodPost, ProviderLinkPath, strings.NewReader(body+"&"+webpage.CSRFField+"=tok")),
		} {
			r.URL.RawQuery = query
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.AddCookie(&http.Cookie{Name: csrfCookie, Value: "tok"})
			if cookie != "" {
				r.AddCookie(&http.Cookie{Name: flowCookie, Value: cookie})
			}
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, r)
			if rec.Code >= 500 {
				t.Fatalf("%s ?%q cookie %q body %q answered %d", r.Method, query, cookie, body, rec.Code)
			}
		}
		fake.pmu.Lock()
		defer fake.pmu.Unlock()
		for _, m := range fake.finishes {
			for _, v := range []string{m.GetFlow(), m.GetState(), m.GetCode(), m.GetError(), m.GetErrorDescription()} {
				if !text.Valid(v) {
					t.Fatalf("sent %q to identity", v)
				}
			}
		}
		var sent []proto.Message
		for _, m := range fake.confirms {
			sent = append(sent, m)
		}
		for _, m := range fake.sends {
			sent = append(sent, m)
		}
		sendable(t, sent)
	})
}
