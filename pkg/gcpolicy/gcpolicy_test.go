package gcpolicy

import (
	"math"
	"runtime/debug"
	"testing"
)

// policy is the collector's percentage and memory limit in force.
type policy struct {
	gcPercent int
	limit     int64
}

// current reads the policy without changing it (SetGCPercent answers the previous value only).
func current() policy {
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	return policy{gcPercent: pct, limit: debug.SetMemoryLimit(-1)}
}

func TestConfigureAppliesTheDefaultsOnlyWhereTheEnvironmentChoseNothing(t *testing.T) {
	defer func(p policy) { debug.SetGCPercent(p.gcPercent); debug.SetMemoryLimit(p.limit) }(current())
	cases := []struct {
		name string
		env  map[string]string
		want policy
	}{
		{"nothing set", nil, policy{GCPercent, Limit}},
		{"GOGC set", map[string]string{"GOGC": "100"}, policy{100, Limit}},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, policy{GCPercent, math.MaxInt64}},
		{"both set", map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"}, policy{100, math.MaxInt64}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// What the runtime would have read from these variables at start-up: here, the test
			// binary's own (unset) values, reset before each case.
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			Configure(func(k string) string { return c.env[k] })
			if got := current(); got != c.want {
				t.Fatalf("after Configure: %+v, want %+v", got, c.want)
			}
		})
	}
}
