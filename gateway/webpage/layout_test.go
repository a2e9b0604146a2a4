package webpage

import (
	"net/http"
	"net/http/httptest"
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

func TestRenderWritesNothingWhenTheTemplateFails(t *testing.T) {
	tmpl := Template("t", `{{define "ok"}}<p>{{.}}</p>{{end}}{{define "broken"}}{{.Missing}}{{end}}`)
	rec := httptest.NewRecorder()
	if err := Render(rec, tmpl, http.StatusTeapot, "ok", "a<b"); err != nil || rec.Code != http.StatusTeapot ||
		rec.Header().Get("Content-Type") != "text/html; charset=utf-8" || rec.Body.String() != "<p>a&lt;b</p>" {
		t.Fatalf("ok: %v %d %q %q", err, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	rec = httptest.NewRecorder()
	if err := Render(rec, tmpl, http.StatusOK, "broken", "a string has no fields"); err == nil || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Fatalf("broken: %v, wrote %q with headers %v", err, rec.Body.String(), rec.Header())
	}
}
