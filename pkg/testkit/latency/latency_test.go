package latency_test

import (
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/testkit/latency"
)

func TestPercentileIsTheNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond // unsorted on purpose
	}
	cases := []struct {
		name string
		took []time.Duration
		p    int
		want time.Duration
	}{
		{"none", nil, 99, 0},
		{"one", []time.Duration{7}, 50, 7},
		{"one at p99", []time.Duration{7}, 99, 7},
		{"median of four", []time.Duration{4, 1, 3, 2}, 50, 2},
		{"p99 of a hundred", hundred, 99, 99 * time.Millisecond},
		{"p50 of a hundred", hundred, 50, 50 * time.Millisecond},
		{"p99 of ten is the slowest", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
	}
	for _, c := range cases {
		if got := latency.Percentile(c.took, c.p); got != c.want {
			t.Errorf("%s: Percentile(p%d) = %v, want %v", c.name, c.p, got, c.want)
		}
	}
}
