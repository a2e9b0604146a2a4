package latency

import (
	"slices"
	"testing"
	"time"
)

// Measure runs call for every iteration of b, timing each, and reports the 50th and 99th
// percentiles in milliseconds (p50-ms, p99-ms). An error from call fails the benchmark.
func Measure(b *testing.B, call func() error) {
	b.Helper()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.ReportMetric(ms(Percentile(took, 50)), "p50-ms")
	b.ReportMetric(ms(Percentile(took, 99)), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Percentile is the nearest-rank p-th percentile of took (0 for none): the least duration that at
// least p percent of them do not exceed. took is sorted in place.
func Percentile(took []time.Duration, p int) time.Duration {
	if len(took) == 0 {
		return 0
	}
	slices.Sort(took)
	rank := (p*len(took) + 99) / 100 // ceil(p/100 * n)
	return took[max(rank, 1)-1]
}
