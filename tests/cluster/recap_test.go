package cluster

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// recapped forwards to the test and keeps each failure's message, so that a recap can repeat them
// after the replicas' log tails: CI shows only the end of a failed run's output, and without the
// recap that end is a replica's log rather than what failed.
type recapped struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

// withRecap wraps t and registers, before anything else the test registers, the cleanup that
// repeats the failures; cleanups run last-in first-out, so it prints last.
func withRecap(t *testing.T) *recapped {
	r := &recapped{TB: t}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.failures) > 0 {
			t.Logf("what failed (repeated after the logs):\n  %s", strings.Join(r.failures, "\n  "))
		}
	})
	return r
}

func (r *recapped) keep(msg string) {
	r.mu.Lock()
	r.failures = append(r.failures, msg)
	r.mu.Unlock()
}

func (r *recapped) Errorf(format string, args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprintf(format, args...))
	r.TB.Errorf(format, args...)
}

func (r *recapped) Error(args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprint(args...))
	r.TB.Error(args...)
}

func (r *recapped) Fatalf(format string, args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprintf(format, args...))
	r.TB.Fatalf(format, args...)
}

func (r *recapped) Fatal(args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprint(args...))
	r.TB.Fatal(args...)
}
