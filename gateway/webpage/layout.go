package webpage

import (
	_ "embed"
	"html/template"
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
