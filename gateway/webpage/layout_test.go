package webpage

import (
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/locale"
)

func TestAPageOfTheLayoutHasTheViewportTheStylesheetAndItsOwnBody(t *testing.T) {
	var b strings.Builder
	if err := Template("t", `{{template "head" .}}<main>{{.}}</main>{{template "foot"}}`).Execute(&b, "Hello <you>"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<meta name="viewport"`, "<style>", "<title>Hello &lt;you&gt;</title>", "<main>Hello &lt;you&gt;</main>", "</html>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

func TestTheLayoutUsesOnlyMessagesOfTheCatalog(t *testing.T) {
	for _, tmpl := range Template("t", "").Templates() {
		if unknown := locale.UnknownKeys(tmpl.Tree); len(unknown) > 0 {
			t.Errorf("template %q uses keys the catalog lacks: %q", tmpl.Name(), unknown)
		}
	}
}

// A development page keeps the English, neutral head; a hosted page's head carries its language
// and the app's colour.
func TestAHostedPagesHeadCarriesItsLanguageAndAccentADevelopmentPagesDoesNot(t *testing.T) {
	var dev, hosted strings.Builder
	if err := Template("dev", `{{template "head" "Berth"}}{{template "foot"}}`).Execute(&dev, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dev.String(), `<html lang="en">`) || !strings.Contains(dev.String(), "--accent:#2563eb") {
		t.Errorf("development head:\n%s", dev.String())
	}
	head := Head{Title: "Anmelden", Brand: Brand{Name: "Shop", Accent: "#0a7f3e", LogoURL: "https://cdn.example.test/l.png"}.Checked(), Printer: locale.For("de")}
	if err := Template("hosted", `{{template "document" .}}{{template "brand" .}}{{template "foot"}}`).Execute(&hosted, head); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<html lang="de">`, "<title>Anmelden</title>", "--accent:#0a7f3e", `alt="Logo von Shop"`, "<span>Shop</span>"} {
		if !strings.Contains(hosted.String(), want) {
			t.Errorf("hosted head lacks %q:\n%s", want, hosted.String())
		}
	}
}

func TestSecurityHeadersAllowTheLogosOriginOnlyWhenAsked(t *testing.T) {
	h := http.Header{}
	SetSecurityHeaders(h, "https://app.test", Brand{LogoURL: "https://CDN.example.test:8443/l.png"}.LogoSource())
	if csp := h.Get("Content-Security-Policy"); csp != "default-src 'none'; style-src 'unsafe-inline'; img-src https://cdn.example.test:8443; form-action 'self' https://app.test; frame-ancestors 'none'; base-uri 'none'" {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	SetSecurityHeaders(h, "", "")
	if csp := h.Get("Content-Security-Policy"); strings.Contains(csp, "img-src") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}
