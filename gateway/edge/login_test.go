package edge

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const describeLogin = "/berth.identity.v1.LoginService/DescribeLogin"

func TestLoginPageIsServedThroughTheEdge(t *testing.T) {
	h := newHarness(t)
	h.identity.program(describeLogin, answer{resp: &identityv1.LoginContext{AppId: "app-1", AppName: "Demo"}})
	q := url.Values{"client_id": {"app-1"}, "redirect_uri": {"https://app.example.com/cb"}, "state": {"s"}, "type": {"signIn"}}

	rec := h.do(t, http.MethodGet, "/login?"+q.Encode(), "", nil)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /login = %d %q:\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("login page answer lacks X-Request-Id: the edge middleware does not wrap it")
	}
	c := h.identity.only(t)
	if c.method != describeLogin || c.req.(*identityv1.DescribeLoginRequest).GetClientId() != "app-1" {
		t.Errorf("backend call = %s %v", c.method, c.req)
	}
}

// A browser posts the login form url-encoded; the edge's JSON media-type check must leave that to
// the page, which here refuses the post for its missing CSRF token.
func TestLoginFormPostPassesTheMediaTypeCheck(t *testing.T) {
	h := newHarness(t)
	h.identity.program(describeLogin, answer{resp: &identityv1.LoginContext{AppId: "app-1", AppName: "Demo"}})
	form := url.Values{"client_id": {"app-1"}, "redirect_uri": {"https://app.example.com/cb"}, "state": {"s"},
		"email": {"ada@example.com"}, "password": {"pw"}}
	rec := h.do(t, http.MethodPost, "/login", form.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if rec.Code != http.StatusForbidden || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("POST /login = %d %q, want the page's 403:\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	for _, c := range h.identity.received() {
		if c.method != describeLogin {
			t.Errorf("unexpected backend call %s", c.method)
		}
	}
}
