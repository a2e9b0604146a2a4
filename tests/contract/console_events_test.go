package contract

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/testkit"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// consoleBrowser is an HTTP client that keeps the console's cookies, as a browser does, and
// stops at redirects so a test sees them.
type consoleBrowser struct {
	t      *testing.T
	base   string
	client *http.Client
}

// consoleAs signs in to the console with email and password.
func (e *env) consoleAs(t *testing.T, email, password string) *consoleBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &consoleBrowser{t: t, base: e.stack.BaseURL, client: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if status, _ := b.get("/console/sign-in"); status != http.StatusOK {
		t.Fatalf("sign-in page = %d", status)
	}
	if status, _ := b.post("/console/sign-in", url.Values{"email": {email}, "password": {password}}); status != http.StatusSeeOther {
		t.Fatalf("sign in as %s = %d", email, status)
	}
	return b
}

// consoleMember makes email an accepted console member of project (invited by mail, the
// invitation accepted with a password) and answers the password.
func (e *env) consoleMember(t *testing.T, project, email string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: project, Email: email, Name: "Member"}); err != nil {
		t.Fatal(err)
	}
	token := ""
	for _, m := range e.stack.Mailbox.Messages() {
		if m.To == email {
			token = seed.InvitationToken(m.Text)
		}
	}
	const password = "a long enough passphrase 42"
	if _, err := e.admin.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Member", Password: password,
		ClientAddress: "127.0.0.1", UserAgent: "contract test"}); err != nil {
		t.Fatalf("accept %s's invitation: %v", email, err)
	}
	return password
}

func (b *consoleBrowser) get(path string) (int, string) {
	b.t.Helper()
	return b.do(http.MethodGet, path, nil)
}

// post sends form with the CSRF token of the browser's cookie.
func (b *consoleBrowser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	u, _ := url.Parse(b.base + "/console")
	for _, k := range b.client.Jar.Cookies(u) {
		if k.Name == "berth_console_csrf" {
			form.Set("csrf_token", k.Value)
		}
	}
	return b.do(http.MethodPost, path, strings.NewReader(form.Encode()))
}

func (b *consoleBrowser) do(method, path string, body io.Reader) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// A member of another project signed in to the console sees none of this project's events pages
// and changes nothing through any of their forms, with valid CSRF tokens and well-formed values:
// the console asks the services with the member's operator token, and they refuse it. This
// project's own member, on the same pages and forms, is served.
func TestAMemberOfAnotherProjectIsRefusedThisProjectsEventsPagesAndEveryAction(t *testing.T) {
	e := start(t, "memory")
	endpoints := "/v1/apps/" + e.demo.AppID + "/webhook-endpoints"
	const hookURL = "https://hooks.example.com/berth-contract"
	created := e.do(http.MethodPost, endpoints, e.write(), `{"url":"`+hookURL+`","events":["user.updated"]}`).ok(t, http.StatusCreated).(map[string]any)
	endpoint := endpoints + "/" + created["id"].(string)
	e.do(http.MethodPut, "/v1/users/"+e.demo.UserIDs[0], e.write(), `{"user":{"nickname":"events-contract"}}`).ok(t, http.StatusOK)
	var deliveryID string
	testkit.Eventually(t, "the change is queued for the endpoint", func() bool {
		items := e.do(http.MethodGet, endpoint+"/deliveries", e.write(), "").ok(t, http.StatusOK).(map[string]any)["items"].([]any)
		if len(items) == 0 {
			return false
		}
		deliveryID = items[0].(map[string]any)["id"].(string)
		return true
	})
	before := e.do(http.MethodGet, endpoint, e.write(), "").ok(t, http.StatusOK).(map[string]any)

	owner := e.consoleAs(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.consoleAs(t, "events-outsider@example.com", e.consoleMember(t, e.other.ProjectID, "events-outsider@example.com"))
	eventsPage := "/console/apps/" + e.demo.AppID + "/events"
	endpointPage := eventsPage + "/" + created["id"].(string)

	for _, page := range []string{eventsPage, endpointPage} {
		if status, body := owner.get(page); status != http.StatusOK || !strings.Contains(body, hookURL) {
			t.Errorf("this project's member: %s = %d, without the endpoint", page, status)
		}
		if status, body := outsider.get(page); status != http.StatusForbidden || strings.Contains(body, hookURL) {
			t.Errorf("another project's member: %s = %d, want 403 showing nothing of the endpoint", page, status)
		}
	}
	actions := []struct {
		page string
		form url.Values
	}{
		{eventsPage, url.Values{"action": {"create"}, "url": {"https://hooks.example.com/outsider"}, "events": {"*"}}},
		{endpointPage, url.Values{"action": {"update"}, "url": {"https://hooks.example.com/outsider"}, "events": {"*"}, "description": {"taken"}}},
		{endpointPage, url.Values{"action": {"disable"}, "confirm": {"yes"}}},
		{endpointPage, url.Values{"action": {"enable"}}},
		{endpointPage, url.Values{"action": {"rotate"}, "confirm": {"yes"}}},
		{endpointPage, url.Values{"action": {"retry"}, "delivery": {deliveryID}}},
		{endpointPage, url.Values{"action": {"recover"}, "since": {"2020-01-01T00:00"}}},
		{endpointPage, url.Values{"action": {"delete"}, "confirm": {"yes"}}},
	}
	for _, a := range actions {
		if status, body := outsider.post(a.page, a.form); status != http.StatusForbidden || strings.Contains(body, "whsec_") {
			t.Errorf("another project's member: %s %s = %d, want 403 without a secret", a.page, a.form.Get("action"), status)
		}
	}
	// Replaying a received provider call: the outsider is refused before any call is looked up;
	// this project's member is admitted and told the made-up call does not exist.
	replay := url.Values{"action": {"replay"}, "event": {uuid.NewString()}}
	if status, _ := outsider.post(eventsPage, replay); status != http.StatusForbidden {
		t.Errorf("another project's member: replay = %d, want 403", status)
	}
	if status, _ := owner.post(eventsPage, replay); status != http.StatusNotFound {
		t.Errorf("this project's member: replay of an unknown call = %d, want 404", status)
	}
	list := e.do(http.MethodGet, endpoints, e.write(), "").ok(t, http.StatusOK).(map[string]any)["items"].([]any)
	after := e.do(http.MethodGet, endpoint, e.write(), "").ok(t, http.StatusOK).(map[string]any)
	if len(list) != 1 || after["url"] != hookURL || after["disabled"] != false || after["updatedAt"] != before["updatedAt"] {
		t.Errorf("the outsider changed the app's endpoints: %d listed, now %v (was %v)", len(list), after, before)
	}

	// The same forms are this project's member's to use.
	for _, a := range actions[1:] {
		if status, body := owner.post(a.page, a.form); status != http.StatusSeeOther && status != http.StatusOK {
			t.Errorf("this project's member: %s %s = %d\n%s", a.page, a.form.Get("action"), status, body)
		}
	}
	if left := e.do(http.MethodGet, endpoints, e.write(), "").ok(t, http.StatusOK).(map[string]any)["items"].([]any); len(left) != 0 {
		t.Errorf("this project's member's delete left %d endpoints", len(left))
	}
}
