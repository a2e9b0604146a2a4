package webpage

import (
	"bytes"
	"html/template"
	"net/http"
)

// Render answers status with the HTML that template name of t makes from data. It renders into a
// buffer first, so that a template failure leaves status and body unwritten: it then answers a
// plain 500 and returns the error for the page to log.
func Render(w http.ResponseWriter, t *template.Template, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}
