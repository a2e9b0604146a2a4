package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/pkg/testkit/procs"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// target is a server the load drives beside the baseline: its name in the report, the CPU time of
// its processes so far, and the demo app it serves.
type target struct {
	name  string
	cpu   func() (time.Duration, error)
	procs []*procs.Process // whose peak resident set a measurement reports
	d     seed.Demo
}

// options are the command's flags; each has an environment default so `make bench-stack` can be
// tuned without editing the Makefile.
type options struct {
	conns        int
	duration     time.Duration
	warmup       time.Duration
	settle       time.Duration
	maxRequests  int
	maxErrorRate float64
	routes       string
	timeout      time.Duration
	pprof        bool
	processes    bool
	split        bool
	rounds       int
}

func parseOptions(args []string, getenv func(string) string) (options, error) {
	fs := flag.NewFlagSet("benchstack", flag.ContinueOnError)
	var o options
	envInt := func(name string, def int) int {
		if n, err := strconv.Atoi(getenv(name)); err == nil {
			return n
		}
		return def
	}
	envDur := func(name string, def time.Duration) time.Duration {
		if d, err := time.ParseDuration(getenv(name)); err == nil {
			return d
		}
		return def
	}
	envStr := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.IntVar(&o.conns, "conns", envInt("BENCH_CONNS", 32), "connections (one worker each) per server `(BENCH_CONNS)`")
	fs.DurationVar(&o.duration, "duration", envDur("BENCH_DURATION", 6*time.Second), "measured time per route and server (BENCH_DURATION)")
	fs.DurationVar(&o.warmup, "warmup", envDur("BENCH_WARMUP", 2*time.Second), "unmeasured load before each measurement (BENCH_WARMUP)")
	fs.DurationVar(&o.settle, "settle", envDur("BENCH_SETTLE", 11*time.Second), "idle time between measurements, so PostgreSQL publishes every count of the last one (BENCH_SETTLE)")
	fs.IntVar(&o.maxRequests, "max-requests", envInt("BENCH_MAX_REQUESTS", 2_000_000), "at most this many requests per measurement (BENCH_MAX_REQUESTS)")
	fs.Float64Var(&o.maxErrorRate, "max-error-rate", 0.001, "fail the run when more answers than this fraction fail")
	fs.StringVar(&o.routes, "routes", envStr("BENCH_ROUTES", "users,tenants,tokens"), "routes to drive: users (14), tenants (5), tokens (1), signins (the hosted sign-in and route 1's code exchange) (BENCH_ROUTES)")
	fs.BoolVar(&o.pprof, "pprof", getenv("BENCH_PPROF") == "true", "serve the Go profiler at the all-in-one's /debug/pprof/ and every split process's, and print their addresses (BENCH_PPROF=true)")
	fs.BoolVar(&o.processes, "processes", getenv("BENCH_PROCESSES") != "false", "first measure the all-in-one's start-up and each production process's idle memory (BENCH_PROCESSES=false skips it)")
	fs.BoolVar(&o.split, "split", getenv("BENCH_SPLIT") != "false", "also drive the split deployment: every production binary as a process of its own (BENCH_SPLIT=false skips it)")
	fs.IntVar(&o.rounds, "rounds", envInt("BENCH_ROUNDS", 5), "baseline and berth measured this many times in turn per read route; the ratio is the median of the rounds' (BENCH_ROUNDS)")
	fs.DurationVar(&o.timeout, "timeout", envDur("BENCH_TIMEOUT", 30*time.Minute), "bound on the whole run (BENCH_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.conns < 1 || o.rounds < 1 || o.duration <= 0 || o.warmup < 0 || o.settle < 0 || o.maxRequests < 1 || o.maxErrorRate < 0 {
		return o, errors.New("-conns, -rounds, -duration and -max-requests must be positive; -warmup, -settle and -max-error-rate not negative")
	}
	for _, r := range strings.Split(o.routes, ",") {
		if _, ok := routeNames[r]; !ok {
			return o, fmt.Errorf("unknown route %q (want users, tenants, tokens, signins)", r)
		}
	}
	return o, nil
}

var routeNames = map[string]string{
	"users":   "14 GET /v1/users/:userId",
	"tenants": "5 GET /v1/tenants/:tenantId",
	"tokens":  "1 POST /api/v1/tokens (refresh)",
	"signins": "hosted sign-in + 1 (code)",
}

func main() {
	o, err := parseOptions(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchstack:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchstack:", err)
		os.Exit(1)
	}
}

// row is one line of the report.
type row struct {
	route, server string
	p             phase
	cpu           time.Duration
	xacts         map[string]int64         // per database, during the measurement
	peak          map[string]int64         // each process's peak resident set during the measurement, bytes
	cpuBy         map[string]time.Duration // each process's CPU time during the measurement
	ratio         string
	note          string
}

// add folds another measurement of the same route and server into r: requests, time, latencies,
// CPU and transactions add up, so the row's rates and percentiles are those of all its rounds.
func (r *row) add(x row) {
	r.p.requests += x.p.requests
	r.p.failures += x.p.failures
	if r.p.firstFail == "" {
		r.p.firstFail = x.p.firstFail
	}
	r.p.elapsed += x.p.elapsed
	r.p.latencies = append(r.p.latencies, x.p.latencies...)
	sortDurations(r.p.latencies)
	r.cpu += x.cpu
	for db, n := range x.xacts {
		r.xacts[db] += n
	}
	for name, b := range x.peak {
		r.peak[name] = max(r.peak[name], b)
	}
	for name, c := range x.cpuBy {
		r.cpuBy[name] += c
	}
}

func run(ctx context.Context, o options, out io.Writer) (err error) {
	root, err := procs.RepoRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "berth-benchstack-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a leftover temporary folder is no reason to fail the run

	fmt.Fprintln(out, "building the all-in-one binary and the baseline...")
	berthBin, err := procs.Build(root, dir, "./cmd/berth")
	if err != nil {
		return err
	}
	baselineBin, err := procs.Build(root, dir, "./tools/benchstack/baseline")
	if err != nil {
		return err
	}

	serverURL, stopServer, err := pgtest.FindServer(ctx)
	if err != nil {
		return err
	}
	if stopServer != nil {
		defer stopServer()
	}
	admin, version, err := openAdmin(ctx, serverURL)
	if err != nil {
		return err
	}
	defer admin.Close()

	// Fresh databases for this run: the stack creates <base>_<module> for every module; they are
	// dropped at the end whatever happens (after the servers stopped).
	base := "bench_" + randomHex(6)
	berthDatabaseURL, err := withDatabase(serverURL, base)
	if err != nil {
		return err
	}
	dbs := databases{admin: admin}
	moduleURLs := map[string]string{}
	for _, m := range allinone.Modules {
		u, err := module.DatabaseName(berthDatabaseURL, m.Name)
		if err != nil {
			return err
		}
		moduleURLs[m.Name] = u
		dbs.names = append(dbs.names, base+"_"+m.Name)
	}
	defer func() {
		dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if derr := dbs.drop(dropCtx); derr != nil && err == nil {
			err = derr
		}
	}()

	if o.processes {
		if err := measureProcesses(ctx, root, dir, berthBin, serverURL, admin, out); err != nil {
			return err
		}
	}

	addrs, err := procs.FreeAddrs(2 + len(allinone.Modules))
	if err != nil {
		return err
	}
	env := map[string]string{
		"BERTH_HTTP_ADDR":      addrs[0],
		"BERTH_DATABASE_URL":   berthDatabaseURL,
		"BERTH_API_KEY_PEPPER": randomHex(32),
		"BERTH_SECRET_KEY":     randomHex(32),
		"BERTH_DEMO_DIR":       dir,
		"BERTH_NATS_URL":       "", // the embedded JetStream server: the whole stack is one process
		// The production default: one access-log line per request is part of what a request costs.
		"BERTH_LOG_LEVEL": "info",
	}
	if o.pprof {
		env[ops.PprofVar] = "true"
		fmt.Fprintf(out, "profiler: http://%s/debug/pprof/ (e.g. go tool pprof http://%s/debug/pprof/profile?seconds=8)\n", addrs[0], addrs[0])
	}
	for i, m := range allinone.Modules {
		env[m.GRPCAddrVar()] = addrs[2+i]
	}
	berth, err := procs.Start("berth", berthBin, dir, env)
	if err != nil {
		return err
	}
	defer berth.Stop()
	var (
		d    seed.Demo
		file seed.File
	)
	err = berth.WaitReady(2*time.Minute, 100*time.Millisecond, func() error {
		f, err := seed.ReadFile(filepath.Join(dir, seed.FileName))
		if err != nil {
			return err // not written yet, or not complete
		}
		d, file = f.Demo, f
		return procs.HTTPOK(ctx, d.BaseURL+"/readyz")()
	})
	if err != nil {
		return err
	}
	if err := optionalVerification(ctx, file, d.AppID); err != nil {
		return err
	}
	if d.BaseURL != "http://"+addrs[0] || len(d.UserIDs) == 0 {
		return fmt.Errorf("demo.json names %q and %d users, want http://%s and the seeded users", d.BaseURL, len(d.UserIDs), addrs[0])
	}

	baseline, err := procs.Start("baseline", baselineBin, dir, map[string]string{
		"BASELINE_ADDR":                  addrs[1],
		"BASELINE_IDENTITY_DATABASE_URL": moduleURLs["identity"],
		"BASELINE_TENANT_DATABASE_URL":   moduleURLs["tenant"],
		"BASELINE_APP_ID":                d.AppID,
		"BASELINE_READ_KEY":              d.ReadKey,
	})
	if err != nil {
		return err
	}
	defer baseline.Stop()
	baselineURL := "http://" + addrs[1]
	if err := baseline.WaitReady(30*time.Second, 100*time.Millisecond, procs.HTTPOK(ctx, baselineURL+"/healthz")); err != nil {
		return err
	}

	// The servers the load drives beside the baseline: the all-in-one, and the split deployment
	// on databases of its own, seeded through its admin API, its billing calling the all-in-one's
	// sandboxes.
	targets := []target{{name: "all-in-one", cpu: func() (time.Duration, error) { return berth.CPU() }, procs: []*procs.Process{berth}, d: d}}
	if o.split {
		splitBase := base + "_split"
		splitURL, err := withDatabase(serverURL, splitBase)
		if err != nil {
			return err
		}
		pspx, pspy := d.BaseURL+mount.PspxPath, d.BaseURL+mount.PspyPath
		s, err := startSplit(ctx, root, dir, splitURL, splitBase, pspx, pspy, o.pprof, out)
		dbs.names = append(dbs.names, s.dbNames...)
		defer s.stop()
		if err != nil {
			return fmt.Errorf("split: %w", err)
		}
		sd, err := s.provision(ctx, pspx, pspy)
		if err != nil {
			return err
		}
		targets = append(targets, target{name: "split", cpu: s.cpu, procs: s.procs, d: sd})
	}

	fmt.Fprintf(out, "PostgreSQL %s, databases %s_*; %d connections, %s per route and server after %s warm-up; loopback\n",
		version, base, o.conns, o.duration, o.warmup)
	client := newClient(o.conns)
	defer client.CloseIdleConnections()

	var rows []row
	first := true
	// measure runs load (a closed loop, or a paced one) on tg for the warm-up, then for the
	// measurement, which it reports under server.
	measure := func(route, server string, tg target, load func(time.Duration) phase) (row, error) {
		if !first && o.settle > 0 {
			select {
			case <-time.After(o.settle):
			case <-ctx.Done():
				return row{}, ctx.Err()
			}
		}
		first = false
		if o.warmup > 0 {
			load(o.warmup)
		}
		cpu0, err := tg.cpu()
		if err != nil {
			return row{}, err
		}
		cpuBy := map[string]time.Duration{}
		for _, p := range tg.procs {
			if err := procs.ResetPeakRSS(p.Pid()); err != nil {
				return row{}, err
			}
			c, err := p.CPU()
			if err != nil {
				return row{}, err
			}
			cpuBy[p.Name] -= c
		}
		x0, err := dbs.transactions(ctx)
		if err != nil {
			return row{}, err
		}
		ph := load(o.duration)
		cpu1, err := tg.cpu()
		if err != nil {
			return row{}, err
		}
		peak := map[string]int64{}
		for _, p := range tg.procs {
			if peak[p.Name], err = procs.Status(p.Pid(), "VmHWM:"); err != nil {
				return row{}, err
			}
			c, err := p.CPU()
			if err != nil {
				return row{}, err
			}
			cpuBy[p.Name] += c
		}
		x1, err := dbs.transactions(ctx)
		if err != nil {
			return row{}, err
		}
		xacts := map[string]int64{}
		for db, n := range x1 {
			xacts[db] = n - x0[db]
		}
		return row{route: route, server: server, p: ph, cpu: cpu1 - cpu0, xacts: xacts, peak: peak, cpuBy: cpuBy}, ctx.Err()
	}
	baselineTarget := target{name: "baseline", cpu: func() (time.Duration, error) { return baseline.CPU() }, procs: []*procs.Process{baseline}}
	closed := func(x op) func(time.Duration) phase {
		return func(d time.Duration) phase { return drive(ctx, o.conns, d, o.maxRequests, x) }
	}

	for _, r := range strings.Split(o.routes, ",") {
		name := routeNames[r]
		ops := make([]op, len(targets))
		for i, tg := range targets {
			if ops[i], err = routeOp(ctx, client, r, tg.d, o.conns); err != nil {
				return fmt.Errorf("%s on %s: %w", name, tg.name, err)
			}
		}
		if why, ok := noBaseline[r]; ok {
			rows = append(rows, row{route: name, server: "baseline", ratio: "n/a", note: "no baseline: " + why})
			for i, tg := range targets {
				b, err := measure(name, tg.name, tg, closed(ops[i]))
				if err != nil {
					return err
				}
				b.ratio = "n/a"
				rows = append(rows, b)
			}
			continue
		}
		// The baseline reads the all-in-one's rows (the split has the same seed in its own).
		baseOp, err := routeOp(ctx, client, r, seed.Demo{BaseURL: baselineURL, AppID: d.AppID, ReadKey: d.ReadKey, TenantID: d.TenantID, UserIDs: d.UserIDs}, o.conns)
		if err != nil {
			return err
		}
		// The baseline and each server in turn, round after round, so that a drift of the
		// machine's speed during the run (a 2-core virtual machine's swings by a fifth) falls on
		// all alike; each round's ratio compares neighbouring measurements, and the median of them
		// is the route's ratio.
		var base row
		measured := make([]row, len(targets))
		ratios := make([][]float64, len(targets))
		for round := range o.rounds {
			rb, err := measure(name, "baseline", baselineTarget, closed(baseOp))
			if err != nil {
				return err
			}
			for i, tg := range targets {
				rs, err := measure(name, tg.name, tg, closed(ops[i]))
				if err != nil {
					return err
				}
				ratios[i] = append(ratios[i], rs.p.rps()/rb.p.rps())
				if round == 0 {
					measured[i] = rs
				} else {
					measured[i].add(rs)
				}
			}
			if round == 0 {
				base = rb
			} else {
				base.add(rb)
			}
		}
		base.ratio = "1.00"
		rows = append(rows, base)
		for i := range targets {
			measured[i].ratio = strconv.FormatFloat(median(ratios[i]), 'f', 2, 64)
			measured[i].note = "ratio: median of the rounds' " + formatRatios(ratios[i])
			rows = append(rows, measured[i])
		}
		// The latency a client sees when a server runs at half the rate it just peaked at (the
		// read routes' goal is a p99 of at most 10 ms there), and the baseline's at the same
		// rate, which shows what the machine itself adds to the tail.
		for i, tg := range targets {
			half := measured[i].p.rps() / 2
			for _, sv := range []struct {
				tg target
				op op
			}{{baselineTarget, baseOp}, {tg, ops[i]}} {
				h, err := measure(name, sv.tg.name+" at ½ "+tg.name+"'s peak", sv.tg, func(d time.Duration) phase { return pace(ctx, o.conns, d, half, sv.op) })
				if err != nil {
					return err
				}
				h.ratio = "-"
				h.note = fmt.Sprintf("paced at %.0f req/s, half of %s's peak; latency counted from when each request was due", half, tg.name)
				rows = append(rows, h)
			}
		}
	}

	report(out, rows, base)
	var failed []string
	for _, r := range rows {
		if r.p.requests > 0 && float64(r.p.failures) > o.maxErrorRate*float64(r.p.requests) {
			failed = append(failed, fmt.Sprintf("%s on %s: %d of %d requests failed, first: %s", r.route, r.server, r.p.failures, r.p.requests, r.p.firstFail))
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	return nil
}

// report prints the table: one line per route and server.
func report(out io.Writer, rows []row, base string) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\tserver\trequests\tfailed\treq/s\tp50\tp99\tCPU µs/req\txact/req\tratio\t")
	for _, r := range rows {
		if r.p.requests == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\t\n", r.route, r.server, r.ratio)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", r.route, r.server, r.p.requests, r.p.failures, r.p.rps(),
			formatLatency(percentile(r.p.latencies, 50)), formatLatency(percentile(r.p.latencies, 99)),
			perRequest(float64(r.cpu)/float64(time.Microsecond), r.p.requests, 0), perRequest(float64(total(r.xacts)), r.p.requests, 2), r.ratio)
	}
	_ = tw.Flush()
	for _, r := range rows {
		if r.note != "" {
			fmt.Fprintf(out, "%s, %s: %s\n", r.route, r.server, r.note)
		}
	}
	for _, r := range rows {
		if r.p.requests > 0 {
			fmt.Fprintf(out, "xact/req by database, %s on %s: %s\n", r.route, r.server, byDatabase(r.xacts, r.p.requests, base))
		}
	}
	for _, r := range rows {
		if r.p.requests > 0 && len(r.cpuBy) > 1 {
			fmt.Fprintf(out, "CPU µs/req by process, %s on %s: %s\n", r.route, r.server, cpuByProcess(r.cpuBy, r.p.requests))
		}
	}
	for _, r := range rows {
		if r.p.requests > 0 && len(r.peak) > 0 {
			fmt.Fprintf(out, "peak RSS MiB, %s on %s: %s\n", r.route, r.server, peakRSS(r.peak))
		}
	}
	fmt.Fprintln(out, "ratio: req/s over the baseline's in this run. CPU: the server's processes (the split's all together), not PostgreSQL, not the load generator.")
	fmt.Fprintln(out, "xact/req: transactions in the run's databases during the measurement (background work included) per request.")
	fmt.Fprintln(out, "peak RSS: each process's highest resident set during the measurement (its rounds' highest), the warm-up left out.")
}

// cpuByProcess renders each process's CPU time per request in µs, in name order.
func cpuByProcess(cpu map[string]time.Duration, requests int) string {
	return byName(cpu, func(c time.Duration) string {
		return perRequest(float64(c)/float64(time.Microsecond), requests, 0)
	})
}

// peakRSS renders each process's peak resident set in MiB, in name order.
func peakRSS(peak map[string]int64) string {
	return byName(peak, func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) })
}

// byName renders "name value" for each entry of m, in name order, comma-separated.
func byName[V any](m map[string]V, value func(V) string) string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + " " + value(m[name])
	}
	return strings.Join(parts, ", ")
}

func total(xacts map[string]int64) int64 {
	var n int64
	for _, x := range xacts {
		n += x
	}
	return n
}

// byDatabase renders transactions per request of each database, in name order, for finding which
// service a route's transactions go to; names lose the run's prefix (base_): the all-in-one's
// "identity", the split's "split_identity".
func byDatabase(xacts map[string]int64, requests int, base string) string {
	short := make(map[string]int64, len(xacts))
	for db, n := range xacts {
		short[strings.TrimPrefix(db, base+"_")] = n
	}
	return byName(short, func(n int64) string { return perRequest(float64(n), requests, 2) })
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
