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

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// consoleBrowser is a signed-in console session over plain HTTP: a cookie jar and no following
// of redirects, so each answer's own status is seen.
type consoleBrowser struct {
	t      *testing.T
	base   string
	client *http.Client
}

// consolePage is one answer of the console.
type consolePage struct {
	status   int
	location string
	body     string
}

func (b consoleBrowser) do(method, path string, form url.Values) consolePage {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		form.Set("csrf_token", b.csrf())
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	return consolePage{status: res.StatusCode, location: res.Header.Get("Location"), body: string(raw)}
}

// csrf is the console's CSRF cookie, which every form repeats (a page was fetched before).
func (b consoleBrowser) csrf() string {
	u, _ := url.Parse(b.base + "/console/")
	for _, k := range b.client.Jar.Cookies(u) {
		if k.Name == "berth_console_csrf" {
			return k.Value
		}
	}
	b.t.Fatal("no console CSRF cookie")
	return ""
}

// consoleSignIn signs email in to the console with password, as a browser does.
func (e *env) consoleSignIn(t *testing.T, email, password string) consoleBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := consoleBrowser{t: t, base: e.stack.BaseURL, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	b.do(http.MethodGet, "/console/sign-in", nil)
	if p := b.do(http.MethodPost, "/console/sign-in", url.Values{"email": {email}, "password": {password}}); p.status != http.StatusSeeOther || p.location != "/console" {
		t.Fatalf("console sign-in of %s = %d %q:\n%s", email, p.status, p.location, p.body)
	}
	return b
}

// consoleMember makes email a member of project the way a person becomes one (the invitation
// mailed and accepted with a password) and signs them in to the console.
func (e *env) consoleMember(t *testing.T, project, email string) consoleBrowser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: project, Email: email, Name: "Member"}); err != nil {
		t.Fatal(err)
	}
	var token string
	for _, m := range e.stack.Mailbox.Messages() {
		if token == "" && strings.Contains(m.To, email) {
			token = seed.InvitationToken(m.Text)
		}
	}
	if token == "" {
		t.Fatalf("no invitation mailed to %s", email)
	}
	const password = "a long enough passphrase 42"
	if _, err := e.admin.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Member", Password: password,
		ClientAddress: "127.0.0.1", UserAgent: "contract test"}); err != nil {
		t.Fatalf("accept the invitation: %v", err)
	}
	return e.consoleSignIn(t, email, password)
}

// mailsTo counts the mails the run sent to address.
func (e *env) mailsTo(address string) int {
	n := 0
	for _, m := range e.stack.Mailbox.Messages() {
		if strings.Contains(m.To, address) {
			n++
		}
	}
	return n
}

// A member of another project gets the console's refusal page, never the data, for this project's
// users list, a user's page and every action on the user; afterwards the user is as before: not
// frozen, not deleted, no mail sent, the sessions untouched. This project's own member sees the
// user on the same pages, so the refusals are not a broken page.
func TestAMemberOfAnotherProjectGetsARefusalPageForThisProjectsUsers(t *testing.T) {
	e := start(t, "memory")
	user := e.demo.UserIDs[0]
	profile := e.do(http.MethodGet, "/v1/users/"+user, e.read(), "").ok(t, http.StatusOK).(map[string]any)
	email, _ := profile["email"].(string)
	if email == "" {
		t.Fatalf("the demo user has no email: %v", profile)
	}
	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.consoleMember(t, e.other.ProjectID, "outsider-"+stacktest.RandomHex(4)+"@example.com")

	usersPath := "/console/apps/" + e.demo.AppID + "/users"
	userPath := usersPath + "/" + user
	list := usersPath + "?q=" + url.QueryEscape(email)
	for _, path := range []string{list, userPath} {
		if p := owner.do(http.MethodGet, path, nil); p.status != http.StatusOK || !strings.Contains(p.body, email) {
			t.Fatalf("this project's member: GET %s = %d without the user:\n%s", path, p.status, p.body)
		}
	}
	sessionsBefore := strings.Count(owner.do(http.MethodGet, userPath, nil).body, "data-session=")
	mailsBefore := e.mailsTo(email)

	refused := func(what string, p consolePage) {
		t.Helper()
		if p.status != http.StatusForbidden || !strings.Contains(p.body, `id="problem"`) || strings.Contains(p.body, email) {
			t.Errorf("another project's member: %s = %d, want 403 on the problem page without the user's address:\n%s", what, p.status, p.body)
		}
	}
	refused("the users list", outsider.do(http.MethodGet, list, nil))
	refused("the users list without a query", outsider.do(http.MethodGet, usersPath, nil))
	refused("the user's page", outsider.do(http.MethodGet, userPath, nil))
	for _, form := range []url.Values{
		{"action": {"freeze"}, "confirm": {"yes"}},
		{"action": {"unfreeze"}},
		{"action": {"revokeSessions"}, "confirm": {"yes"}},
		{"action": {"sendReset"}},
		{"action": {"resendVerification"}},
		{"action": {"resetFactors"}, "confirm": {"yes"}},
		{"action": {"delete"}, "confirm_email": {email}},
	} {
		refused("POST "+form.Get("action"), outsider.do(http.MethodPost, userPath, form))
	}
	// This project's user named under the outsider's own app is no user of that app.
	if p := outsider.do(http.MethodGet, "/console/apps/"+e.other.AppID+"/users/"+user, nil); p.status != http.StatusNotFound || strings.Contains(p.body, email) {
		t.Errorf("this project's user under the other project's app = %d:\n%s", p.status, p.body)
	}

	after := e.do(http.MethodGet, "/v1/users/"+user, e.read(), "").ok(t, http.StatusOK).(map[string]any)
	if after["freezed"] != false || after["deleted"] != false {
		t.Errorf("after the refused actions the user is freezed %v, deleted %v", after["freezed"], after["deleted"])
	}
	page := owner.do(http.MethodGet, userPath, nil)
	if n := strings.Count(page.body, "data-session="); page.status != http.StatusOK || n != sessionsBefore {
		t.Errorf("after the refused actions the user has %d sessions, had %d", n, sessionsBefore)
	}
	if n := e.mailsTo(email); n != mailsBefore {
		t.Errorf("the refused actions mailed the user %d times", n-mailsBefore)
	}
}
