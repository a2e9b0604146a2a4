package conformance

import (
	"fmt"
	"slices"
	"testing"
)

// Exempt declares that the adapter under test cannot honour the case named Case, and why.
type Exempt struct {
	Case   string
	Reason string
}

// Suite runs cases as subtests of one test, skipping the exempted ones.
type Suite struct {
	t      *testing.T
	exempt []Exempt
	ran    []string
}

// New returns a suite for t. When t ends it fails if an exemption names no case the suite ran or
// gives no reason.
func New(t *testing.T, exempt []Exempt) *Suite {
	s := &Suite{t: t, exempt: exempt}
	t.Cleanup(func() {
		for _, p := range problems(exempt, s.ran) {
			t.Error("conformance: " + p)
		}
	})
	return s
}

// Run runs test as the subtest name, or skips it with the reason when the adapter is exempt.
func (s *Suite) Run(name string, test func(t *testing.T)) {
	s.ran = append(s.ran, name)
	i := slices.IndexFunc(s.exempt, func(e Exempt) bool { return e.Case == name })
	s.t.Run(name, func(t *testing.T) {
		if i >= 0 {
			t.Skip("exempt: " + s.exempt[i].Reason)
		}
		test(t)
	})
}

// problems lists what is wrong with exempt for a suite that ran the cases ran.
func problems(exempt []Exempt, ran []string) []string {
	var out []string
	for _, e := range exempt {
		if e.Reason == "" {
			out = append(out, fmt.Sprintf("exemption of %q gives no reason", e.Case))
		}
		if !slices.Contains(ran, e.Case) {
			out = append(out, fmt.Sprintf("exemption names %q, which is no case of this suite", e.Case))
		}
	}
	return out
}
