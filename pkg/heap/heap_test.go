package heap

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestConfigureAppliesTheDefaultsOnlyWhereTheEnvironmentChoseNothing(t *testing.T) {
	defer func(p Policy) { debug.SetGCPercent(p.GCPercent); debug.SetMemoryLimit(p.Limit) }(Current())
	cases := []struct {
		name string
		env  map[string]string
		want Policy
	}{
		{"nothing set", nil, Policy{GCPercent: GCPercent, Limit: Limit}},
		{"GOGC set", map[string]string{"GOGC": "100"}, Policy{GCPercent: 100, Limit: Limit}},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, Policy{GCPercent: GCPercent, Limit: math.MaxInt64}},
		{"both set", map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"}, Policy{GCPercent: 100, Limit: math.MaxInt64}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// What the runtime would have read from these variables at start-up: here, the test
			// binary's own (unset) values, reset before each case.
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			got := Configure(func(k string) string { return c.env[k] })
			if got != c.want {
				t.Fatalf("Configure = %+v, want %+v", got, c.want)
			}
		})
	}
}
