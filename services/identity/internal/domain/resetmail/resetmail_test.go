package resetmail_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/services/identity/internal/domain/resetmail"
)

func TestComposeCarriesLinkAndCodeInBothPartsOfEachLanguage(t *testing.T) {
	d := resetmail.Data{To: "ada@example.test", App: "Shop & Co", Link: "https://berth.test/login/recover?token=abc&x=1", Code: "012345", Minutes: 15, Accent: "#ff0000"}
	for lang, subject := range map[string]string{
		locale.English: "Reset your password for Shop & Co",
		locale.German:  "Passwort für Shop & Co zurücksetzen",
	} {
		m, err := resetmail.Compose(lang, d)
		if err != nil {
			t.Fatal(err)
		}
		if m.To != d.To || m.Subject != subject {
			t.Errorf("%s: to %q, subject %q", lang, m.To, m.Subject)
		}
		if !strings.Contains(m.Text, "\n"+d.Link+"\n") || !strings.Contains(m.Text, "\n"+d.Code+"\n") || !strings.Contains(m.Text, " 15 ") {
			t.Errorf("%s: text part lacks link, code or minutes:\n%s", lang, m.Text)
		}
		if !strings.Contains(m.HTML, `href="https://berth.test/login/recover?token=abc&amp;x=1" style="color:#ff0000"`) ||
			!strings.Contains(m.HTML, "<strong>012345</strong>") || !strings.Contains(m.HTML, "Shop &amp; Co") || !strings.Contains(m.HTML, `lang="`+lang+`"`) {
			t.Errorf("%s: HTML part lacks the escaped link, code or app:\n%s", lang, m.HTML)
		}
		if strings.Contains(m.Text, "resetMail.") || strings.Contains(m.HTML, "resetMail.") {
			t.Errorf("%s: a message key is missing from the catalog:\n%s", lang, m.Text)
		}
	}
	if _, err := resetmail.Compose("fr", d); err == nil {
		t.Error("a language Berth does not speak was rendered")
	}
}
