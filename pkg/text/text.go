package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/fault"
)

// Rule says which control characters a field's value may contain.
type Rule int

const (
	// SingleLine refuses every control character: names, ids, emails, URLs, tokens, passwords.
	SingleLine Rule = iota
	// MultiLine also allows tab, line feed and carriage return: free-text descriptions.
	MultiLine
)

// The fixed texts of a broken rule. They complete a field name: "name must be valid UTF-8".
const (
	MsgInvalidUTF8 = "must be valid UTF-8"
	MsgNUL         = "must not contain NUL characters"
	MsgControl     = "must not contain control characters"
)

// Problem returns the rule s breaks ("" when s is fine): invalid UTF-8 first, then NUL, then any
// other control character (Unicode category Cc: C0, DEL and C1) the rule does not allow.
func (r Rule) Problem(s string) string {
	if !utf8.ValidString(s) {
		return MsgInvalidUTF8
	}
	problem := ""
	for _, c := range s {
		switch {
		case c == 0:
			return MsgNUL // the worst: reported even when another control character came first
		case !unicode.IsControl(c):
		case r == MultiLine && (c == '\t' || c == '\n' || c == '\r'):
		default:
			problem = MsgControl
		}
	}
	return problem
}

// Check returns an Invalid fault naming field when s breaks the rule, nil otherwise.
func (r Rule) Check(field, s string) error {
	if p := r.Problem(s); p != "" {
		return fault.InvalidField(field, "%s", p)
	}
	return nil
}

// Check applies SingleLine, the rule of almost every field.
func Check(field, s string) error { return SingleLine.Check(field, s) }

// Valid reports whether s passes SingleLine.
func Valid(s string) bool { return SingleLine.Problem(s) == "" }

// Sanitize returns s without what the rule refuses (SingleLine): invalid bytes and control
// characters are dropped. For echoing a refused value back (a form re-rendered after a failure),
// never for storing it.
func Sanitize(s string) string {
	var b strings.Builder
	for i, c := range s {
		if (c == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) || unicode.IsControl(c) {
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
