package invite_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/services/identity/internal/domain/invite"
)

func TestLanguageAcceptsEnglishAndGermanCaseInsensitively(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"en", "en", true},
		{"DE", "de", true},
		{" En ", "en", true},
		{"", "", false},
		{"fr", "", false},
		{"de-AT", "", false},
		{"english", "", false},
	} {
		got, ok := invite.Language(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Language(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestComposeRendersEachLanguageAndEscapesHTML(t *testing.T) {
	d := invite.Data{To: "friend@example.test", Inviter: `Ada <script>`, App: "Shop & Co", Link: "https://berth.test/login?a=1&b=2"}
	for _, tc := range []struct {
		lang, subject, text string
	}{
		{"en", "Ada <script> invites you to Shop & Co", "Ada <script> invites you to join Shop & Co."},
		{"de", "Ada <script> lädt dich zu Shop & Co ein", "Ada <script> lädt dich ein, Shop & Co beizutreten."},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			m, err := invite.Compose(tc.lang, d)
			if err != nil {
				t.Fatal(err)
			}
			if m.To != d.To || m.Subject != tc.subject || !strings.Contains(m.Text, tc.text) || !strings.Contains(m.Text, d.Link) {
				t.Errorf("message = %+v", m)
			}
			if strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "Ada &lt;script&gt;") ||
				!strings.Contains(m.HTML, `href="https://berth.test/login?a=1&amp;b=2"`) || !strings.Contains(m.HTML, `lang="`+tc.lang+`"`) {
				t.Errorf("HTML = %s", m.HTML)
			}
		})
	}
	if _, err := invite.Compose("fr", d); err == nil {
		t.Error("Compose(fr) succeeded")
	}
}
