package config

import (
	"fmt"
	"io"
	"strings"
)

// Section is one process kind's (or one module's) settings in the configuration reference.
type Section struct {
	Title    string
	Intro    string
	Settings []Setting
}

// WriteReference renders the settings tables of the configuration reference
// (docs/configuration.md) from the declarations: one table per section, in the given order.
func WriteReference(w io.Writer, sections []Section) error {
	var b strings.Builder
	for i, s := range sections {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "## %s\n\n", s.Title)
		if s.Intro != "" {
			b.WriteString(strings.TrimSpace(s.Intro) + "\n\n")
		}
		if len(s.Settings) == 0 {
			b.WriteString("None of its own.\n")
			continue
		}
		b.WriteString("| variable | default | required | secret | accepts | what for |\n")
		b.WriteString("|---|---|---|---|---|---|\n")
		for _, st := range s.Settings {
			def := "—"
			if st.Default != "" {
				def = "`" + st.Default + "`"
			}
			doc := st.Doc
			if st.Hint != "" {
				doc += " (" + st.Hint + ")"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", st.Name, def, yesNo(st.Required), yesNo(st.Secret), cell(st.Rule()), cell(doc))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// cell keeps a text inside its table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
