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
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/webpage"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// consolePassword is the password the console members the tests make choose.
const consolePassword = "a long enough passphrase 42"

// consoleBrowser is a browser on the console over plain HTTP: it keeps its cookies (the session
// and the CSRF token) and does not follow redirects, so each answer is seen as the console gave it.
type consoleBrowser struct {
	t      *testing.T
	base   string
	client *http.Client
}

// consolePage is one answer of the console.
type consolePage struct {
	status   int
	location string
	header   http.Header
	body     string
}

// joinConsole makes email a member of project the way a person becomes one: the invitation is
// mailed, and its link accepted with password.
func (e *env) joinConsole(t *testing.T, project, email, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: project, Email: email, Name: "Member"}); err != nil {
		t.Fatal(err)
	}
	var token string
	for _, m := range e.stack.Mailbox.Messages() { // newest first
		if token == "" && m.To == email {
			token = seed.InvitationToken(m.Text)
		}
	}
	if token == "" {
		t.Fatalf("no invitation mailed to %s", email)
	}
	if _, err := e.admin.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Member", Password: password,
		ClientAddress: "127.0.0.1", UserAgent: "contract test"}); err != nil {
		t.Fatalf("accept the invitation: %v", err)
	}
}

// consoleBrowser is a browser of its own on the console's sign-in page, signed in to nothing.
func (e *env) consoleBrowser(t *testing.T) *consoleBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &consoleBrowser{t: t, base: e.stack.BaseURL, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	b.get(console.SignInPath)
	return b
}

// consoleSignIn signs email in through the console's sign-in form, as a browser does.
func (e *env) consoleSignIn(t *testing.T, email, password string) *consoleBrowser {
	t.Helper()
	b := e.consoleBrowser(t)
	if p := b.post(console.SignInPath, url.Values{"email": {email}, "password": {password}}); p.status != http.StatusSeeOther || p.location != console.Path {
		t.Fatalf("console sign-in of %s = %d %q:\n%s", email, p.status, p.location, p.body)
	}
	return b
}

// consoleMember makes email a member of project (joinConsole) and signs them in.
func (e *env) consoleMember(t *testing.T, project, email string) *consoleBrowser {
	t.Helper()
	e.joinConsole(t, project, email, consolePassword)
	return e.consoleSignIn(t, email, consolePassword)
}

func (b *consoleBrowser) do(method, path string, body io.Reader) consolePage {
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
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	return consolePage{status: res.StatusCode, location: res.Header.Get("Location"), header: res.Header, body: string(raw)}
}

func (b *consoleBrowser) get(path string) consolePage {
	b.t.Helper()
	return b.do(http.MethodGet, path, nil)
}

// post sends form with the CSRF token of the browser's cookie, as the console's forms do.
func (b *consoleBrowser) post(path string, form url.Values) consolePage {
	b.t.Helper()
	form.Set(webpage.CSRFField, b.csrf())
	return b.do(http.MethodPost, path, strings.NewReader(form.Encode()))
}

// csrf is the console's CSRF cookie, which every form repeats (a page was fetched before).
func (b *consoleBrowser) csrf() string {
	b.t.Helper()
	u, _ := url.Parse(b.base + console.Path)
	for _, k := range b.client.Jar.Cookies(u) {
		if k.Name == "berth_console_csrf" {
			return k.Value
		}
	}
	b.t.Fatal("no console CSRF cookie")
	return ""
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
