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

// analyticsConsole is a browser-like client of the console signed in as one member: it keeps the
// session and CSRF cookies and does not follow redirects, so a refusal is seen as answered.
type analyticsConsole struct {
	t    *testing.T
	base string
	http *http.Client
}

// analyticsMember signs email in to the console with password.
func analyticsMember(t *testing.T, e *env, email, password string) analyticsConsole {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := analyticsConsole{t: t, base: e.stack.BaseURL, http: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if status, _, _ := c.get("/console/sign-in"); status != http.StatusOK {
		t.Fatalf("the sign-in page = %d", status)
	}
	u, _ := url.Parse(c.base + "/console/")
	var csrf string
	for _, k := range jar.Cookies(u) {
		if k.Name == "berth_console_csrf" {
			csrf = k.Value
		}
	}
	form := url.Values{"email": {email}, "password": {password}, "csrf_token": {csrf}}
	res, err := c.http.PostForm(c.base+"/console/sign-in", form)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console" {
		t.Fatalf("console sign-in of %s = %d %q", email, res.StatusCode, res.Header.Get("Location"))
	}
	return c
}

// get answers the status, headers and body of a console path.
func (c analyticsConsole) get(path string) (int, http.Header, string) {
	c.t.Helper()
	res, err := c.http.Get(c.base + path)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(raw)
}

// newConsoleMember makes email a console member of project the way a person becomes one: the
// invitation is mailed, and its link accepted with password.
func newConsoleMember(t *testing.T, e *env, project, email, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: project, Email: email, Name: "Member"}); err != nil {
		t.Fatal(err)
	}
	var token string
	for deadline := time.Now().Add(20 * time.Second); token == ""; time.Sleep(100 * time.Millisecond) {
		for _, m := range e.stack.Mailbox.Messages() {
			if m.To == email {
				token = seed.InvitationToken(m.Text)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no invitation mail to %s", email)
		}
	}
	if _, err := e.admin.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Member", Password: password,
		ClientAddress: "127.0.0.1", UserAgent: "contract test"}); err != nil {
		t.Fatal(err)
	}
}

// A member of another project is refused this project's analytics page and every chart's CSV (by
// analytics, whose series route holds a member's token to their own project), and is shown
// nothing of it; the same member reads their own app's analytics, and this project's member
// reads this app's.
func TestConsoleAnalyticsOfAnotherProjectsAppAreRefusedToAMember(t *testing.T) {
	e := start(t, "memory")
	const password = "a long enough passphrase 42"
	outsiderEmail := "outsider-" + stacktest.RandomHex(4) + "@example.test"
	newConsoleMember(t, e, e.other.ProjectID, outsiderEmail, password)
	outsider := analyticsMember(t, e, outsiderEmail, password)
	owner := analyticsMember(t, e, e.demo.Console.Email, e.demo.Console.Password)

	demo := "/console/apps/" + e.demo.AppID + "/analytics"
	for _, path := range []string{demo + "?days=7", demo, demo + "/sign-ins.csv?days=7", demo + "/revenue-eur.csv?days=365", demo + "/failures.csv"} {
		status, header, body := outsider.get(path)
		if status != http.StatusForbidden || !strings.Contains(body, "You are not allowed to do this in this project.") {
			t.Errorf("another project's member: GET %s = %d, want the console's 403 page:\n%s", path, status, body)
		}
		if header.Get("Content-Disposition") != "" || !strings.HasPrefix(header.Get("Content-Type"), "text/html") {
			t.Errorf("another project's member: GET %s answered %q %q", path, header.Get("Content-Type"), header.Get("Content-Disposition"))
		}
		if strings.Contains(body, "chart-data") || strings.Contains(body, "<svg") || strings.Contains(body, "Demo app") {
			t.Errorf("another project's member: GET %s shows the app's analytics:\n%s", path, body)
		}
	}

	for _, who := range []struct {
		name   string
		member analyticsConsole
		app    string
	}{{"the other project's member", outsider, e.other.AppID}, {"this project's member", owner, e.demo.AppID}} {
		page := "/console/apps/" + who.app + "/analytics"
		if status, _, body := who.member.get(page + "?days=7"); status != http.StatusOK || strings.Count(body, `class="chart-data"`) < 4 {
			t.Errorf("%s: own app's analytics = %d:\n%s", who.name, status, body)
		}
		status, header, body := who.member.get(page + "/sign-ins.csv?days=7")
		if status != http.StatusOK || !strings.HasPrefix(header.Get("Content-Disposition"), "attachment;") || !strings.HasPrefix(body, "Day,Sign-ins,Active users\r\n") {
			t.Errorf("%s: own app's CSV = %d %q:\n%s", who.name, status, header.Get("Content-Disposition"), body)
		}
	}
}
