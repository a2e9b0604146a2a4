package main

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// sortDurations sorts latencies in place, ascending.
func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}

// formatRatio renders a throughput ratio to the baseline; "n/a" without a baseline to divide by.
func formatRatio(rps, baseline float64) string {
	if baseline <= 0 || rps < 0 {
		return "n/a"
	}
	return strconv.FormatFloat(rps/baseline, 'f', 2, 64)
}

// formatLatency renders a latency in milliseconds with two decimals (sub-millisecond answers on
// loopback are common, so whole milliseconds would say too little).
func formatLatency(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}

// perRequest divides a total by a request count; "n/a" without requests.
func perRequest(total float64, requests int, decimals int) string {
	if requests <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(total/float64(requests), 'f', decimals, 64)
}

// median of values (the mean of the middle two for an even count); 0 for none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	mid := len(v) / 2
	if len(v)%2 == 0 {
		return (v[mid-1] + v[mid]) / 2
	}
	return v[mid]
}

// formatRatios lists per-round ratios ("0.81, 0.77, 0.84").
func formatRatios(values []float64) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strings.Join(parts, ", ")
}
