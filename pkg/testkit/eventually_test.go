package testkit_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/testkit"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	polls := 0
	testkit.Eventually(t, "the third poll", func() bool { polls++; return polls == 3 })
	if polls != 3 {
		t.Fatalf("cond polled %d times, want Eventually to stop at the first success (3)", polls)
	}
}
