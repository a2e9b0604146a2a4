package edge

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const describeAccount = "/berth.identity.v1.LoginService/DescribeAccount"

// The account page is served through the edge, and a browser's url-encoded form reaches it past
// the JSON media-type check; here the page refuses the post for its missing CSRF token.
func TestAccountPageIsServedThroughTheEdge(t *testing.T) {
	h := newHarness(t)
	h.identity.program(describeAccount, answer{resp: &identityv1.LoginContext{AppId: "app-1", AppName: "Demo", AccountCallbackUri: "https://berth.test/account/callback"}})

	rec := h.do(t, http.MethodGet, "/account?client_id=app-1", "", nil)
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login?") {
		t.Fatalf("GET /account = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	form := url.Values{"client_id": {"app-1"}, "action": {"endAll"}}
	rec = h.do(t, http.MethodPost, "/account", form.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if rec.Code != http.StatusForbidden || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("POST /account = %d %q, want the page's 403:\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	for _, c := range h.identity.received() {
		if c.method != describeAccount {
			t.Errorf("unexpected backend call %s", c.method)
		}
	}
}
