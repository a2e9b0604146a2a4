package emailchange_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/services/identity/internal/domain/emailchange"
)

func TestEveryMailRendersBothPartsInEachLanguageAndEscapesTheAppName(t *testing.T) {
	d := emailchange.Data{To: "new@example.test", App: "Shop <&> Co", Link: "https://berth.test/email-change?token=abc&x=1"}
	for _, kind := range []emailchange.Kind{emailchange.Confirm, emailchange.Taken, emailchange.Changed} {
		for _, lang := range []string{"en", "de"} {
			t.Run(string(kind)+"-"+lang, func(t *testing.T) {
				m, err := emailchange.Compose(kind, lang, d)
				if err != nil {
					t.Fatal(err)
				}
				if m.To != d.To || !strings.Contains(m.Subject, d.App) || !strings.Contains(m.Text, d.App) {
					t.Errorf("message = %+v", m)
				}
				if strings.Contains(m.HTML, "<&>") || !strings.Contains(m.HTML, "Shop &lt;&amp;&gt; Co") || !strings.Contains(m.HTML, `lang="`+lang+`"`) {
					t.Errorf("HTML part does not escape the app name or name its language:\n%s", m.HTML)
				}
				hasLink := strings.Contains(m.Text, d.Link) && strings.Contains(m.HTML, `href="https://berth.test/email-change?token=abc&amp;x=1"`)
				if hasLink != (kind == emailchange.Confirm) {
					t.Errorf("link present = %v in the %s mail", hasLink, kind)
				}
			})
		}
	}
}

func TestAGermanMailSpeaksGermanAndShowsTheAppsBranding(t *testing.T) {
	m, err := emailchange.Compose(emailchange.Confirm, "de", emailchange.Data{To: "a@example.test", App: "Shop",
		Link: "https://berth.test/email-change?token=t", Accent: "#0a7f3e", Logo: "https://cdn.example.test/l.png"})
	if err != nil || !strings.HasPrefix(m.Subject, "Bestätige deine neue E-Mail-Adresse") || !strings.Contains(m.Text, "Der Link ist 24 Stunden gültig") ||
		!strings.Contains(m.HTML, `style="color:#0a7f3e"`) || !strings.Contains(m.HTML, `<img src="https://cdn.example.test/l.png"`) {
		t.Fatalf("de: %v %+v", err, m)
	}
}

func TestAnUnknownLanguageOrMailIsAnError(t *testing.T) {
	if _, err := emailchange.Compose(emailchange.Taken, "fr", emailchange.Data{To: "a@example.test", App: "Shop"}); err == nil {
		t.Error("a mail rendered in a language Berth does not speak")
	}
	if _, err := emailchange.Compose("other", "en", emailchange.Data{}); err == nil {
		t.Error("an unknown mail rendered")
	}
}
