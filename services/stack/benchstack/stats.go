package main

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat. sysconf
// (_SC_CLK_TCK) is 100 on every Linux architecture Go supports, and reading it needs cgo.
const clockTicks = 100

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

// parseProcStat returns the CPU time (utime + stime) of /proc/<pid>/stat's contents. The command
// name (field 2) is parenthesised and may itself hold spaces and parentheses, so fields are counted
// from the last ')'.
func parseProcStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no command name")
	}
	// After ") " come field 3 (state), 4, ...; utime and stime are fields 14 and 15.
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
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
