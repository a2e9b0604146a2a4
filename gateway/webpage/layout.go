package webpage

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
)

//go:embed layout.html
var layoutHTML string

// Template parses a page that wraps its body in the shared layout: {{template "head" "Title"}}
// opens the document (the viewport, the one stylesheet of every hosted page) and {{template
// "foot"}} closes it. Between them the page writes its <main> (class "wide" for a page of tables
// and commands rather than a form). So every hosted and development page looks alike and none
// carries a copy of the stylesheet.
func Template(name, page string) *template.Template {
	return template.Must(template.Must(template.New(name).Parse(layoutHTML)).Parse(page))
}

// Render executes the template name of t with data into a buffer first and only then writes the
// HTML answer with status, so a template failure leaves the answer unwritten: the caller logs the
// error and can still answer a plain 500.
func Render(w http.ResponseWriter, t *template.Template, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}
