package conformance

import "testing"

func TestExemptionsMustNameACaseAndGiveAReason(t *testing.T) {
	ran := []string{"plain", "needs transactions"}
	for _, tc := range []struct {
		name   string
		exempt Exempt
		want   int
	}{
		{"valid", Exempt{Case: "needs transactions", Reason: "no transactions"}, 0},
		{"stale case name", Exempt{Case: "renamed away", Reason: "no transactions"}, 1},
		{"no reason", Exempt{Case: "plain"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := problems([]Exempt{tc.exempt}, ran); len(got) != tc.want {
				t.Fatalf("problems = %q, want %d", got, tc.want)
			}
		})
	}
}
