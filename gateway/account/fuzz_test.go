package account

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/text"
)

// FuzzAccountForm sends arbitrary link queries, form bodies and callback queries to the page,
// signed in and with a valid CSRF pair, so submissions reach the backend. The page must never
// answer 5xx, must answer HTML or a redirect, and whatever it sends identity must marshal and pass
// the text rule: a value that did not would have been a 500 on the wire or in Postgres.
func FuzzAccountForm(f *testing.F) {
	for _, s := range []struct{ query, body string }{
		{"client_id=" + appID, "client_id=" + appID + "&action=password&current_password=a&new_password=b"},
		{"client_id=%ff", "client_id=" + appID + "&action=end&session_id=" + otherID},
		{"client_id=a%00b&notice=password", "client_id=" + appID + "&action=end&session_id=%00"},
		{"code=c&state=s", "client_id=" + appID + "&action=password&current_password=%ff&new_password=b"},
		{"client_id=" + appID + "&language=de", "client_id=" + appID + "&action=endAll&language=%1b"},
		{"", "client_id=" + appID + "&action=signOut&x=%zz"},
		{"", "client_id=" + appID + "&action=totpStart"},
		{"", "client_id=" + appID + "&action=totpConfirm&code=123456"},
		{"", "client_id=" + appID + "&action=totpConfirm&code=12%0034"},
		{"", "client_id=" + appID + "&action=recoveryCodes"},
		{"", "client_id=" + appID + "&action=passkeyStart"},
		{"", "client_id=" + appID + "&action=passkeyFinish&passkey=%7B%7D&passkey_state=s"},
		{"", "client_id=" + appID + "&action=passkeyFinish&passkey=%00"},
		{"client_id=" + appID + "&notice=linkTaken&link=idpA", "client_id=" + appID + "&action=unlink&slot=idpA"},
		{"client_id=" + appID + "&link=idpZ", "client_id=" + appID + "&action=unlink&slot=idpZ"},
		{"", "client_id=" + appID + "&action=unlink&slot=idpB&current_password=pw"},
		{"", "client_id=" + appID + "&action=unlink&slot=idpB&current_password=%07"},
		{"", "client_id=" + appID + "&action=removeFactor&kind=totp&current_password=pw"},
		{"", "client_id=" + appID + "&action=removeFactor&kind=passkey&factor_id=" + otherID},
		{"", "client_id=" + appID + "&action=removeFactor&kind=passkey&factor_id=%00"},
	} {
		f.Add(s.query, s.body)
	}
	f.Fuzz(func(t *testing.T, query, body string) {
		fake := newFake()
		p, _ := newPage(fake)
		flow := &http.Cookie{Name: flowCookie, Value: webpage.NewToken() + "." + webpage.NewToken() + "." + appID + "."}
		for _, target := range []struct{ method, path string }{
			{http.MethodGet, Path}, {http.MethodPost, Path}, {http.MethodGet, CallbackPath},
		} {
			req := httptest.NewRequestWithContext(t.Context(), target.method, target.path, strings.NewReader(body+"&"+webpage.CSRFField+"="+strings.Repeat("A", 43)))
			req.URL.RawQuery = query
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: csrf.Cookie, Value: strings.Repeat("A", 43)})
			req.AddCookie(signedIn)
			req.AddCookie(flow)
			req.RemoteAddr = "203.0.113.9:51234"
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s ?%q %q answered %d", target.method, target.path, query, body, rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusSeeOther && ct != "text/html; charset=utf-8" {
				t.Fatalf("%s %s ?%q %q: Content-Type %q", target.method, target.path, query, body, ct)
			}
		}
		for _, c := range fake.all() {
			if _, err := proto.Marshal(c.req); err != nil {
				t.Fatalf("the page sent identity a message gRPC cannot marshal: %v", err)
			}
			if err := text.Message(c.req); err != nil {
				t.Fatalf("the page sent identity a message that breaks the text rule: %v", err)
			}
		}
	})
}
