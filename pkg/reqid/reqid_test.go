package reqid

import (
	"strings"
	"testing"
)

func TestAcceptKeepsOnlyShortPlainIDs(t *testing.T) {
	cases := []struct {
		supplied string
		kept     bool
	}{
		{"client-req-1", true},
		{"A.b_c:d-9", true},
		{strings.Repeat("a", 128), true},
		{"", false},
		{strings.Repeat("a", 129), false},
		{"two words", false},
		{"line\nforged", false},
		{"quote\"", false},
		{"slash/", false},
		{"ünïcode", false},
		{"nul\x00", false},
	}
	for _, c := range cases {
		got := Accept(c.supplied)
		if c.kept && got != c.supplied {
			t.Errorf("Accept(%q) = %q, want it kept", c.supplied, got)
		}
		if !c.kept && (got == c.supplied || len(got) != 32) {
			t.Errorf("Accept(%q) = %q, want a fresh 32-hex-digit id", c.supplied, got)
		}
	}
}
