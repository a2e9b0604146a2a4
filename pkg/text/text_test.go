package text_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/text"
)

func TestRuleProblemNamesTheBrokenRule(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		rule   text.Rule
		wanted string
	}{
		{"plain text", "Grüße, ACME Ltd. 東京", text.SingleLine, ""},
		{"empty", "", text.SingleLine, ""},
		{"invalid UTF-8", "a\xffb", text.SingleLine, text.MsgInvalidUTF8},
		{"truncated multi-byte sequence", "\xe6\x9d", text.SingleLine, text.MsgInvalidUTF8},
		{"NUL", "a\x00b", text.SingleLine, text.MsgNUL},
		{"NUL after another control character", "\x01a\x00", text.SingleLine, text.MsgNUL},
		{"NUL in a multi-line field", "a\n\x00", text.MultiLine, text.MsgNUL},
		{"newline in a single-line field", "a\nb", text.SingleLine, text.MsgControl},
		{"tab in a single-line field", "a\tb", text.SingleLine, text.MsgControl},
		{"escape", "a\x1b[31m", text.SingleLine, text.MsgControl},
		{"DEL", "a\x7f", text.SingleLine, text.MsgControl},
		{"C1 control", "a\u0085", text.SingleLine, text.MsgControl},
		{"lines in a multi-line field", "first\r\nsecond\tindented\n", text.MultiLine, ""},
		{"escape in a multi-line field", "a\n\x1b", text.MultiLine, text.MsgControl},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.rule.Problem(c.in); got != c.wanted {
				t.Errorf("Problem(%q) = %q, want %q", c.in, got, c.wanted)
			}
		})
	}
}

func TestCheckIsAnInvalidFaultNamingTheField(t *testing.T) {
	err := text.Check("name", "a\x00")
	f, ok := fault.As(err)
	if !ok || f.Kind() != fault.KindInvalid || f.Field() != "name" || f.Message() != "name "+text.MsgNUL {
		t.Fatalf("Check = %v, want an invalid fault for name", err)
	}
	if err := text.Check("name", "ok"); err != nil {
		t.Errorf("Check(ok) = %v", err)
	}
	if text.Valid("a\x7f") || !text.Valid("ok") {
		t.Error("Valid disagrees with SingleLine")
	}
}

func TestSanitizeDropsWhatTheRuleRefuses(t *testing.T) {
	if got := text.Sanitize("a\xffb\x00c\nd\u00a0é\uFFFD"); got != "abcd\u00a0é\uFFFD" {
		t.Errorf("Sanitize = %q", got)
	}
}
