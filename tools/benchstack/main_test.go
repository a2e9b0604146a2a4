package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, c := range []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", hundred, 99, 99 * time.Millisecond},
		{"p100 is the largest", hundred, 100, 100 * time.Millisecond},
		{"tiny p is the smallest", hundred, 0.001, time.Millisecond},
	} {
		if got := percentile(c.in, c.p); got != c.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", c.name, c.p, got, c.want)
		}
	}
	unsorted := ms(5, 1, 4, 2, 3)
	sortDurations(unsorted)
	if percentile(unsorted, 50) != 3*time.Millisecond {
		t.Errorf("sorted = %v", unsorted)
	}
}

func TestFormatting(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{formatRatio(3900, 10000), "0.39"},
		{formatRatio(7500, 10000), "0.75"},
		{formatRatio(12000, 10000), "1.20"},
		{formatRatio(100, 0), "n/a"},
		{formatLatency(16500 * time.Microsecond), "16.50ms"},
		{formatLatency(390 * time.Microsecond), "0.39ms"},
		{perRequest(31_600_000, 100_000, 0), "316"},
		{perRequest(300_000, 100_000, 2), "3.00"},
		{perRequest(5, 0, 2), "n/a"},
		{byDatabase(map[string]int64{"bench_ab_tenant": 100, "bench_ab_identity": 300, "bench_ab_split_identity": 200}, 100, "bench_ab"), "identity 3.00, split_identity 2.00, tenant 1.00"},
		{formatRatios([]float64{0.814, 0.7, 1}), "0.81, 0.70, 1.00"},
		{strconv.FormatFloat(median([]float64{0.9, 0.7, 0.8}), 'f', 2, 64), "0.80"},
		{strconv.FormatFloat(median([]float64{0.9, 0.7, 0.8, 0.6}), 'f', 2, 64), "0.75"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestDriveStopsAtTheRequestBoundAndCountsFailures(t *testing.T) {
	var calls atomic.Int64
	p := drive(context.Background(), 4, time.Minute, 100, func(context.Context, int) error {
		if calls.Add(1)%10 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	if p.requests != 100 || calls.Load() != 100 || p.failures != 10 || p.firstFail != "boom" {
		t.Fatalf("requests %d, calls %d, failures %d (%q); want 100, 100, 10", p.requests, calls.Load(), p.failures, p.firstFail)
	}
	if len(p.latencies) != 100 || p.latencies[0] > p.latencies[99] {
		t.Fatal("latencies are not the sorted latencies of every request")
	}
}

func TestOptionsDefaultToTheDocumentedRunAndTakeTheEnvironment(t *testing.T) {
	o, err := parseOptions(nil, func(string) string { return "" })
	if err != nil || o.conns != 32 || o.duration != 6*time.Second || o.rounds != 5 || o.warmup != 2*time.Second || o.routes != "users,tenants,tokens" || !o.split {
		t.Fatalf("defaults = %+v, %v", o, err)
	}
	env := map[string]string{"BENCH_CONNS": "4", "BENCH_DURATION": "2s", "BENCH_SPLIT": "false"}
	o, err = parseOptions([]string{"-routes", "users"}, func(k string) string { return env[k] })
	if err != nil || o.conns != 4 || o.duration != 2*time.Second || o.routes != "users" || o.split {
		t.Fatalf("from the environment = %+v, %v", o, err)
	}
	if _, err := parseOptions([]string{"-routes", "users,billing"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "billing") {
		t.Fatalf("an unknown route was accepted: %v", err)
	}
}

func TestPaceSendsAtTheRateAndChargesQueueingToTheRequest(t *testing.T) {
	var calls atomic.Int64
	p := pace(context.Background(), 2, time.Second, 200, func(context.Context, int) error {
		calls.Add(1)
		return nil
	})
	if p.requests < 150 || p.requests > 210 || p.failures != 0 {
		t.Fatalf("200/s for 1 s sent %d requests (%d failed)", p.requests, p.failures)
	}
	// One worker taking 10 ms per request at 200/s falls behind by half a second within the
	// second: the latencies must show that wait, not the 10 ms each request took once started.
	slow := pace(context.Background(), 1, time.Second, 200, func(context.Context, int) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	})
	if got := percentile(slow.latencies, 99); got < 200*time.Millisecond {
		t.Fatalf("p99 of an overloaded server = %v, want the queueing (hundreds of ms) counted", got)
	}
}

func TestRowsOfSeveralRoundsAddUp(t *testing.T) {
	r := row{p: phase{requests: 100, elapsed: time.Second, latencies: []time.Duration{1, 3}}, cpu: 10, xacts: map[string]int64{"a": 100}}
	r.add(row{p: phase{requests: 300, failures: 1, firstFail: "x", elapsed: time.Second, latencies: []time.Duration{2}}, cpu: 30, xacts: map[string]int64{"a": 300, "b": 5}})
	if r.p.requests != 400 || r.p.failures != 1 || r.p.firstFail != "x" || r.p.rps() != 200 || r.cpu != 40 ||
		r.xacts["a"] != 400 || r.xacts["b"] != 5 || len(r.p.latencies) != 3 || r.p.latencies[1] != 2 {
		t.Fatalf("added row = %+v", r)
	}
}

func TestDriveTimesEachRequestFromItsSendingToItsAnswer(t *testing.T) {
	p := drive(context.Background(), 2, time.Minute, 10, func(context.Context, int) error {
		time.Sleep(2 * time.Millisecond)
		return nil
	})
	if p.requests != 10 || p.latencies[0] < 2*time.Millisecond {
		t.Fatalf("%d requests, fastest %v; want 10, each at least the 2 ms it took", p.requests, p.latencies[0])
	}
}

func TestPerProcessFiguresAreListedInNameOrderInTheirUnits(t *testing.T) {
	cpu := map[string]time.Duration{"identity": 3 * time.Millisecond, "gateway": 6 * time.Millisecond}
	if got, want := cpuByProcess(cpu, 100), "gateway 60, identity 30"; got != want {
		t.Errorf("cpuByProcess = %q, want %q", got, want)
	}
	if got, want := peakRSS(map[string]int64{"tenant": 3 << 19, "berth": 100 << 20}), "berth 100.0, tenant 1.5"; got != want {
		t.Errorf("peakRSS = %q, want %q", got, want)
	}
	xacts := map[string]int64{"b_split_identity": 99, "b_identity": 200}
	if got, want := byDatabase(xacts, 100, "b"), "identity 2.00, split_identity 0.99"; got != want {
		t.Errorf("byDatabase = %q, want %q", got, want)
	}
}
