package edge

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/pkg/logx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// consoleKey seals the harness's console sessions.
var consoleKey = []byte("0123456789abcdef0123456789abcdef")

const (
	signInMember   = "/berth.identity.v1.MemberService/SignInMember"
	describeMember = "/berth.identity.v1.MemberService/DescribeMember"
	listApps       = "/berth.identity.v1.MemberService/ListProjectApps"
)

// The console is served through the edge: its url-encoded sign-in form passes the JSON media-type
// check, the sign-in reaches identity with the browser's address, and the pages after it call
// identity with the member's operator token.
func TestTheConsoleIsServedThroughTheEdgeWithTheMembersToken(t *testing.T) {
	h := newHarness(t)
	h.identity.program(signInMember, answer{resp: &identityv1.MemberSignIn{Token: "op-token", ExpiresAt: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}})
	h.identity.program(describeMember, answer{resp: &identityv1.MemberProfile{ProjectId: "p-1", Email: "owner@example.com"}})
	h.identity.program(listApps, answer{resp: &identityv1.AppList{}})

	rec := h.do(t, http.MethodGet, console.SignInPath, "", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("GET %s = %d %q", console.SignInPath, rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
	csrf := cookieOf(rec, "berth_console_csrf")
	form := url.Values{"email": {"owner@example.com"}, "password": {"secret"}, "csrf_token": {csrf}}
	rec = h.do(t, http.MethodPost, console.SignInPath, form.Encode(), map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "Cookie": "berth_console_csrf=" + csrf})
	session := cookieOf(rec, console.SessionCookie)
	if rec.Code != http.StatusSeeOther || session == "" {
		t.Fatalf("POST %s = %d:\n%s", console.SignInPath, rec.Code, rec.Body)
	}
	rec = h.do(t, http.MethodGet, console.Path, "", map[string]string{"Cookie": console.SessionCookie + "=" + session})
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d:\n%s", console.Path, rec.Code, rec.Body)
	}
	var sawApps bool
	for _, c := range h.identity.received() {
		switch c.method {
		case signInMember:
			if c.req.(*identityv1.SignInMemberRequest).GetClientAddress() == "" || len(c.md.Get("authorization")) != 0 {
				t.Errorf("sign-in call = %v %v", c.req, c.md)
			}
		case describeMember, listApps:
			sawApps = sawApps || c.method == listApps
			if got := c.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer op-token" {
				t.Errorf("%s carried %q, want the member's token", c.method, got)
			}
		default:
			t.Errorf("unexpected call %s", c.method)
		}
	}
	if !sawApps {
		t.Error("the home page listed no apps")
	}
}

// Without its key the edge serves no console: its paths are unknown.
func TestAnEdgeWithoutTheConsoleKeyServesNoConsole(t *testing.T) {
	h := newHarness(t)
	edge, err := New(t.Context(), h.conns, logx.New(h.logs, "info"), WithLogin(h.conns[LoginModule]), WithPayment(h.conns[PaymentModule]))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	edge.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, console.SignInPath, nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET %s without the console = %d", console.SignInPath, rec.Code)
	}
}

func cookieOf(rec *httptest.ResponseRecorder, name string) string {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
