package contract

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/pkg/testkit/passkeytest"
)

var (
	passkeyOptions = regexp.MustCompile(`id="passkey-form" data-mode="(?:create|get)" data-options="([^"]+)"`)
	passkeyState   = regexp.MustCompile(`name="passkey_state" value="([^"]+)"`)
	challengeField = regexp.MustCompile(`name="challenge" value="([^"]+)"`)
	listedPasskey  = regexp.MustCompile(`<tr data-passkey="([0-9a-f-]{36})">`)
)

// field is the first group of re in page, unescaped as a browser reads the attribute.
func field(t *testing.T, re *regexp.Regexp, page consolePage) string {
	t.Helper()
	m := re.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the page (%d) has no %s:\n%s", page.status, re, page.body)
	}
	return html.UnescapeString(m[1])
}

// A member adds a passkey through the console's security page and finishes a sign-in with it over
// the real edge, the passkey answered by a software authenticator; a member of another project
// neither sees nor removes it.
func TestAConsoleMembersPasskeySignsThemInAndIsBeyondAnotherProjectsMember(t *testing.T) {
	e := startWith(t, stacktest.Options{Localhost: true})
	if !strings.HasPrefix(e.stack.BaseURL, "http://localhost:") {
		t.Fatalf("the stack is served at %s, want localhost", e.stack.BaseURL)
	}
	key, err := passkeytest.New(e.stack.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	const email = "passkey-owner@example.test"
	owner := e.consoleMember(t, e.demo.ProjectID, email)
	page := owner.get(console.SecurityPath)
	credential, err := key.Create(field(t, passkeyOptions, page))
	if err != nil {
		t.Fatal(err)
	}
	added := owner.post(console.SecurityPath, url.Values{"action": {"addPasskey"}, "name": {"Owner's key"}, "current_password": {consolePassword},
		"passkey": {credential}, "passkey_state": {field(t, passkeyState, page)}})
	if added.status != http.StatusOK || !strings.Contains(added.body, `id="recovery-codes"`) {
		t.Fatalf("adding the first passkey = %d, want its recovery codes:\n%s", added.status, added.body)
	}
	passkeyID := field(t, listedPasskey, owner.get(console.SecurityPath))

	outsider := e.consoleMember(t, e.other.ProjectID, "passkey-outsider@example.test")
	if theirs := outsider.get(console.SecurityPath); !strings.Contains(theirs.body, `id="no-passkeys"`) || strings.Contains(theirs.body, "Owner&#39;s key") {
		t.Errorf("another project's member sees passkeys:\n%s", theirs.body)
	}
	removed := outsider.post(console.SecurityPath, url.Values{"action": {"removePasskey"}, "passkey_id": {passkeyID}, "current_password": {consolePassword}})
	if removed.status != http.StatusNotFound {
		t.Errorf("another project's member removing the passkey = %d, want 404:\n%s", removed.status, removed.body)
	}
	if still := owner.get(console.SecurityPath); !strings.Contains(still.body, passkeyID) {
		t.Errorf("the owner's passkey is gone after another's removal:\n%s", still.body)
	}

	// A new sign-in: the password, then the passkey beside the code field.
	b := e.consoleBrowser(t)
	step := b.post(console.SignInPath, url.Values{"email": {email}, "password": {consolePassword}})
	if step.status != http.StatusOK {
		t.Fatalf("sign-in = %d, want the second step:\n%s", step.status, step.body)
	}
	assertion, err := key.Get(field(t, passkeyOptions, step))
	if err != nil {
		t.Fatal(err)
	}
	signedIn := b.post(console.PasskeySignInPath, url.Values{"challenge": {field(t, challengeField, step)}, "passkey": {assertion},
		"passkey_state": {field(t, passkeyState, step)}})
	if signedIn.status != http.StatusSeeOther || signedIn.location != console.Path {
		t.Fatalf("the passkey = %d %q, want the console:\n%s", signedIn.status, signedIn.location, signedIn.body)
	}
	if home := b.get(console.Path); home.status != http.StatusOK || !strings.Contains(home.body, email) {
		t.Errorf("home after the passkey = %d:\n%s", home.status, home.body)
	}
	// The same assertion again is refused: its challenge is spent.
	again := b.post(console.PasskeySignInPath, url.Values{"challenge": {field(t, challengeField, step)}, "passkey": {assertion},
		"passkey_state": {field(t, passkeyState, step)}})
	if again.status != http.StatusUnauthorized || !strings.Contains(again.body, `id="sign-in"`) {
		t.Errorf("a replayed assertion = %d, want the sign-in form again:\n%s", again.status, again.body)
	}
}
