package accountmail

import (
	"github.com/berthhq/berth/pkg/locale"
	"strings"
	"testing"
)

func TestMailsHaveBothPartsAndOnlyTheAppNameInTheSubject(t *testing.T) {
	v, err := ComposeVerify("en", Verify{To: "ada@example.test", App: "Shop", Link: "https://berth.test/login/verify?token=abc", Code: "012345"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ComposeRegistered("en", Registered{To: "ada@example.test", App: "Shop", SignInLink: "https://berth.test/login?client_id=x&state=y"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		subject  string
		got      string
		contains []string
		text     string
		html     string
	}{
		{"verify", "Confirm your email address for Shop", v.Subject, []string{"https://berth.test/login/verify?token=abc", "012345"}, v.Text, v.HTML},
		// The HTML part escapes the link's & like any value.
		{"registered", "Sign-up attempt with your address at Shop", r.Subject, []string{"https://berth.test/login?client_id=x"}, r.Text, r.HTML},
	} {
		if c.got != c.subject {
			t.Errorf("%s subject = %q, want %q", c.name, c.got, c.subject)
		}
		for _, want := range c.contains {
			if !strings.Contains(c.text, want) || !strings.Contains(c.html, want) {
				t.Errorf("%s: %q missing from a part", c.name, want)
			}
		}
	}
	if strings.Contains(r.Text, "012345") || strings.Contains(r.Text, "/login/verify") {
		t.Error("the notice to a registered address carries a verification")
	}
}

func TestTheHTMLPartEscapesTheAppName(t *testing.T) {
	m, err := ComposeVerify("en", Verify{To: "a@example.test", App: `<script>x</script>`, Link: "https://berth.test/l", Code: "000000"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "<script>") {
		t.Fatalf("the HTML part renders the app name as markup:\n%s", m.HTML)
	}
}

func TestMailsSpeakGerman(t *testing.T) {
	m, err := ComposeVerify("de", Verify{To: "a@example.test", App: "Shop", Link: "https://berth.test/l", Code: "000000"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Bestätige deine E-Mail-Adresse für Shop" || !strings.Contains(m.HTML, `lang="de"`) {
		t.Fatalf("German mail: %q\n%s", m.Subject, m.HTML)
	}
}

func TestTheMemberInvitationCarriesTheLinkInBothLanguages(t *testing.T) {
	for lang, subject := range map[string]string{"en": "You are invited to the Shop project on Berth", "de": "Deine Einladung zum Projekt Shop auf Berth"} {
		m, err := ComposeMemberInvitation(lang, MemberInvitation{To: "ada@example.test", Project: "Shop", Link: "https://berth.test/console/invitation?token=abc"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != subject || !strings.Contains(m.Text, "https://berth.test/console/invitation?token=abc") ||
			!strings.Contains(m.HTML, `href="https://berth.test/console/invitation?token=abc"`) || m.To != "ada@example.test" {
			t.Errorf("%s invitation: %q\n%s\n%s", lang, m.Subject, m.Text, m.HTML)
		}
	}
}

func TestTheMemberInvitationUsesOnlyMessagesOfTheCatalog(t *testing.T) {
	tm := memberInvitationMail
	if unknown := locale.UnknownKeys(tm.subject.Tree, tm.text.Tree, tm.html.Tree); len(unknown) > 0 {
		t.Errorf("the member invitation uses keys the catalog lacks: %q", unknown)
	}
}

// The code that confirms a provider link names the provider and how long it works, in both
// languages and both parts.
func TestTheLinkCodeMailNamesTheProviderAndTheCodeInBothLanguages(t *testing.T) {
	for _, lang := range []string{"en", "de"} {
		m, err := ComposeLinkCode(lang, LinkCode{To: "a@example.test", App: "Shop", Provider: "Sandbox B", Code: "042137", Minutes: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{m.Text, m.HTML} {
			for _, want := range []string{"042137", "Sandbox B", "Shop", "10"} {
				if !strings.Contains(part, want) {
					t.Errorf("%s: %q missing from a part:\n%s", lang, want, part)
				}
			}
		}
		if !strings.Contains(m.Subject, "Shop") || strings.Contains(m.Subject, "042137") {
			t.Errorf("%s subject = %q, want the app and never the code", lang, m.Subject)
		}
	}
}

// The mail telling an app's operators that an endpoint was disabled is in the member's language.
func TestTheNoticeOfADisabledEndpointIsWrittenInTheMembersLanguage(t *testing.T) {
	d := EndpointDisabled{To: "ada@example.test", App: "Shop", URL: "https://hooks.example.test/in?a=1&b=2",
		FailingSince: "2025-06-02 08:09 UTC", Link: "https://berth.test/console/apps/x/events"}
	for _, c := range []struct{ lang, subject, phrase string }{
		{"en", "Webhooks of Shop are no longer sent to one of its endpoints", "has failed since 2025-06-02 08:09 UTC"},
		{"de", "Webhooks von Shop gehen an einen Endpunkt nicht mehr hinaus", "schlägt seit 2025-06-02 08:09 UTC fehl"},
	} {
		m, err := ComposeEndpointDisabled(c.lang, d)
		if err != nil {
			t.Fatal(err)
		}
		if m.To != d.To || m.Subject != c.subject {
			t.Errorf("%s: to %q subject %q, want %q", c.lang, m.To, m.Subject, c.subject)
		}
		if !strings.Contains(m.Text, c.phrase) || !strings.Contains(m.Text, d.URL) || !strings.Contains(m.Text, d.Link) {
			t.Errorf("%s text lacks the phrase, URL or link:\n%s", c.lang, m.Text)
		}
		// The HTML part escapes the URL's & like any value.
		if !strings.Contains(m.HTML, "https://hooks.example.test/in?a=1&amp;b=2") || !strings.Contains(m.HTML, `href="`+d.Link+`"`) {
			t.Errorf("%s html lacks the URL or link:\n%s", c.lang, m.HTML)
		}
	}
}
