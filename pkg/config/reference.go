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

// WriteReference renders the configuration reference (docs/configuration.md) from the
// declarations: one table per section, in the given order.
func WriteReference(w io.Writer, intro string, sections []Section) error {
	var b strings.Builder
	b.WriteString("# Configuration\n\n")
	b.WriteString("<!-- Generated from the settings declarations by `make docs`; a test fails when it differs. -->\n\n")
	b.WriteString(strings.TrimSpace(intro) + "\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Title)
		if s.Intro != "" {
			b.WriteString(strings.TrimSpace(s.Intro) + "\n\n")
		}
		b.WriteString("| variable | default | required | secret | accepts | what for |\n")
		b.WriteString("|---|---|---|---|---|---|\n")
		for _, st := range s.Settings {
			def := "—"
			if st.Default != "" {
				def = "`" + st.Default + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", st.Name, def, yesNo(st.Required), yesNo(st.Secret), cell(st.Rule()), cell(st.Doc))
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
