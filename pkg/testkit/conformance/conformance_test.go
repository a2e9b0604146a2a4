package conformance_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/testkit/conformance"
)

func TestExemptCasesAreSkippedAndOthersRun(t *testing.T) {
	var ran []string
	t.Run("suite", func(t *testing.T) {
		s := conformance.New(t, []conformance.Exempt{{Case: "needs transactions", Reason: "no transactions"}})
		s.Run("plain", func(*testing.T) { ran = append(ran, "plain") })
		s.Run("needs transactions", func(*testing.T) { ran = append(ran, "needs transactions") })
	})
	if len(ran) != 1 || ran[0] != "plain" {
		t.Fatalf("ran %v, want only the case without exemption", ran)
	}
}
