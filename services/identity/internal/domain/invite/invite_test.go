package invite_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/services/identity/internal/domain/invite"
)

func TestComposeRendersEachLanguageAndEscapesHTML(t *testing.T) {
	d := invite.Data{To: "friend@example.test", Inviter: `Ada <script>`, App: "Shop & Co", Link: "https://berth.test/login?a=1&b=2",
		Accent: "#0a7f3e", Logo: "https://cdn.example.test/logo.png"}
	for _, tc := range []struct {
		lang, subject, text string
	}{
		{"en", "Your invitation to Shop & Co", "Hello,\n\nyou are invited to join Shop & Co. The invitation was sent by a user of Shop & Co who gave this name:\n\u201cAda <script>\u201d\n"},
		{"de", "Deine Einladung zu Shop & Co", "Hallo,\n\ndu bist eingeladen, Shop & Co beizutreten. Die Einladung kommt von einem Nutzer von Shop & Co, der diesen Namen angegeben hat:\n\u201cAda <script>\u201d\n"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			m, err := invite.Compose(tc.lang, d)
			if err != nil {
				t.Fatal(err)
			}
			if m.To != d.To || m.Subject != tc.subject || !strings.Contains(m.Text, tc.text) || !strings.Contains(m.Text, d.Link) {
				t.Errorf("message = %+v", m)
			}
			if strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "<blockquote>\u201cAda &lt;script&gt;\u201d</blockquote>") ||
				!strings.Contains(m.HTML, `href="https://berth.test/login?a=1&amp;b=2" style="color:#0a7f3e"`) || !strings.Contains(m.HTML, `lang="`+tc.lang+`"`) ||
				!strings.Contains(m.HTML, `<img src="https://cdn.example.test/logo.png" alt="Shop &amp; Co"`) || !strings.Contains(m.HTML, "Shop &amp; Co") {
				t.Errorf("HTML = %s", m.HTML)
			}
		})
	}
	if _, err := invite.Compose("fr", d); err == nil {
		t.Error("Compose(fr) succeeded")
	}
}

// A name is user-chosen text: it never reaches the subject or the link, and in the body it stays
// one quoted line of bounded length, whatever it contains.
func TestInviterNameIsQuotedDataOnly(t *testing.T) {
	name := "Your bank\r\nURGENT: verify at https://evil.test/\t" + strings.Repeat("x", 100)
	for _, lang := range []string{"en", "de"} {
		m, err := invite.Compose(lang, invite.Data{To: "f@example.test", Inviter: name, App: "Shop", Link: "https://berth.test/login?referral=r"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(m.Subject, "bank") || strings.Contains(m.Subject, "evil") {
			t.Errorf("%s subject carries the name: %q", lang, m.Subject)
		}
		want := "\u201cYour bank URGENT: verify at https://evil.test/ " + strings.Repeat("x", 64-len("Your bank URGENT: verify at https://evil.test/ ")) + "\u2026\u201d\n"
		if !strings.Contains(m.Text, "\n"+want) {
			t.Errorf("%s text does not show the name as one quoted, bounded line:\n%s", lang, m.Text)
		}
		if strings.Count(m.Text, "evil.test") != 1 || strings.Contains(m.Text, "\r") {
			t.Errorf("%s text:\n%q", lang, m.Text)
		}
	}
}

func TestAnUnbrandedInviteHasTheNeutralLook(t *testing.T) {
	m, err := invite.Compose("en", invite.Data{To: "f@example.test", Inviter: "Ada", App: "Shop", Link: "https://berth.test/login?referral=r"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "<img") || strings.Contains(m.HTML, "style=") {
		t.Errorf("an app without branding got some:\n%s", m.HTML)
	}
}
