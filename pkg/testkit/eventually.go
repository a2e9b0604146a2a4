package testkit

import (
	"testing"
	"time"
)

// waitBound bounds Eventually. It guards against a hang when an asynchronous effect (an event's
// delivery, a cache eviction) never happens; it is no latency requirement, so it is generous for a
// loaded machine running many suites in parallel.
const waitBound = 20 * time.Second

// pollEvery is short against the effects waited for (tens of milliseconds), so a test waits little
// past the moment cond holds.
const pollEvery = 10 * time.Millisecond

// Eventually polls cond until it holds, and fails the test with "timed out waiting until <what>"
// when it does not within a bounded wait.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(pollEvery)
	}
}
