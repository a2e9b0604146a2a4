package webpage

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRenderAnswersAPlain500WhenTheTemplateFailsHalfway(t *testing.T) {
	tmpl := template.Must(template.New("page").Parse(`{{define "ok"}}<p>{{.}}</p>{{end}}{{define "bad"}}<p>started{{.Missing}}</p>{{end}}`))
	rec := httptest.NewRecorder()
	if err := Render(rec, tmpl, http.StatusTeapot, "ok", "<hi>"); err != nil || rec.Code != http.StatusTeapot ||
		rec.Body.String() != "<p>&lt;hi&gt;</p>" || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("ok: %v, %d %q %q", err, rec.Code, rec.Body, rec.Header().Get("Content-Type"))
	}
	rec = httptest.NewRecorder()
	if err := Render(rec, tmpl, http.StatusOK, "bad", "a string has no field"); err == nil || rec.Code != http.StatusInternalServerError ||
		rec.Body.String() != "Internal Server Error\n" {
		t.Errorf("bad: %v, %d %q: a half-rendered page must not be sent", err, rec.Code, rec.Body)
	}
}
