package webpage

import (
	"strings"
	"testing"
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
