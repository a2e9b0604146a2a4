package resetmail_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/services/identity/internal/domain/resetmail"
)

func TestComposeCarriesLinkAndCodeInBothPartsOfEachLanguage(t *testing.T) {
	d := resetmail.Data{To: "ada@example.test", App: "Shop & Co", Link: "https://berth.test/recover?token=abc&x=1", Code: "012345", Minutes: 15}
	for lang, subject := range map[string]string{
		"en": "Reset your password for Shop & Co",
		"de": "Passwort für Shop & Co zurücksetzen",
		"":   "Reset your password for Shop & Co",
	} {
		m, err := resetmail.Compose(lang, d)
		if err != nil {
			t.Fatal(err)
		}
		if m.To != d.To || m.Subject != subject {
			t.Errorf("%q: to %q, subject %q", lang, m.To, m.Subject)
		}
		if !strings.Contains(m.Text, d.Link) || !strings.Contains(m.Text, d.Code) || !strings.Contains(m.Text, "15") {
			t.Errorf("%q: text part lacks link, code or minutes:\n%s", lang, m.Text)
		}
		if !strings.Contains(m.HTML, `href="https://berth.test/recover?token=abc&amp;x=1"`) || !strings.Contains(m.HTML, "<strong>012345</strong>") ||
			!strings.Contains(m.HTML, "Shop &amp; Co") {
			t.Errorf("%q: HTML part lacks the escaped link, code or app:\n%s", lang, m.HTML)
		}
	}
}
