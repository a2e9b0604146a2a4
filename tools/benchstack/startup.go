package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/testkit/procs"
)

// Start-up and idle memory, measured before the load runs:
//
//   - the all-in-one process on its embedded defaults (memory stores, embedded NATS, the demo
//     seeded): the time from exec to its first 200 on /readyz, three starts;
//   - every production binary (each module's cmd and the gateway) as its own process against the
//     run's PostgreSQL server (databases of its own) and a NATS server listening on loopback:
//     each one's resident set (VmRSS) once all are ready and have idled for idleFor, then the CPU
//     each spends and the transactions its database counts while nobody calls them, over idleSpan.
//
// readyPoll bounds the error of the ready time; idleFor lets start-up work (migrations, stream
// set-up, the first relay and consumer polls) finish before memory is read. idleSpan is long against
// the background work's periods (polls of up to a few seconds) and against how late PostgreSQL may
// publish a session's transaction counts (up to 10 s for an idle session), so the rate of both is
// read over a window twice that long.
const (
	readyPoll = 5 * time.Millisecond
	idleFor   = 3 * time.Second
	idleSpan  = 20 * time.Second
)

// measureProcesses prints the start-up figures. serverURL is the PostgreSQL server, admin its
// maintenance connection, with which the databases it creates are dropped at the end.
func measureProcesses(ctx context.Context, root, dir, berthBin, serverURL string, admin *pgxpool.Pool, out io.Writer) (err error) {
	fmt.Fprintln(out, "start-up and idle memory (each production process on its own; the all-in-one on its embedded defaults):")
	var readies []time.Duration
	for i := range 3 {
		d, err := allInOneReady(ctx, berthBin, dir, i)
		if err != nil {
			return err
		}
		readies = append(readies, d)
	}
	sort.Slice(readies, func(i, j int) bool { return readies[i] < readies[j] })
	fmt.Fprintf(out, "  all-in-one ready in %s (median of 3: %s, %s, %s)\n", ms(readies[1]), ms(readies[0]), ms(readies[1]), ms(readies[2]))

	base := "bench_" + randomHex(6) + "p"
	baseURL, err := withDatabase(serverURL, base)
	if err != nil {
		return err
	}
	dbs := databases{admin: admin}
	defer func() { // declared before the processes' stop, so it runs after they stopped
		dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if derr := dbs.drop(dropCtx); derr != nil && err == nil {
			err = derr
		}
	}()
	// Nobody pays here: billing's provider URLs lead nowhere.
	s, err := startSplit(ctx, root, dir, baseURL, base, "http://127.0.0.1:1/pspx", "http://127.0.0.1:1/pspy", false, io.Discard)
	dbs.names = s.dbNames
	defer s.stop()
	if err != nil {
		return err
	}
	started := s.procs
	time.Sleep(idleFor)
	rss := map[string]int64{}
	cpu0 := map[string]time.Duration{}
	for _, p := range started {
		if rss[p.Name], err = p.RSS(); err != nil {
			return err
		}
		if cpu0[p.Name], err = p.CPU(); err != nil {
			return err
		}
	}
	x0, err := dbs.transactions(ctx)
	if err != nil {
		return err
	}
	select {
	case <-time.After(idleSpan):
	case <-ctx.Done():
		return ctx.Err()
	}
	x1, err := dbs.transactions(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  process\tidle RSS MiB\tidle CPU %% of a core\tidle xact/s\t\n")
	for _, p := range started {
		cpu1, err := p.CPU()
		if err != nil {
			return err
		}
		xacts := "-" // the gateway has no database
		if db := base + "_" + p.Name; slices.Contains(dbs.names, db) {
			xacts = fmt.Sprintf("%.1f", float64(x1[db]-x0[db])/idleSpan.Seconds())
		}
		fmt.Fprintf(tw, "  %s\t%.1f\t%.2f\t%s\t\n", p.Name, float64(rss[p.Name])/(1<<20), 100*float64(cpu1-cpu0[p.Name])/float64(idleSpan), xacts)
	}
	return tw.Flush()
}

// allInOneReady starts the all-in-one binary on its embedded defaults and returns how long it took
// to answer /readyz with 200.
func allInOneReady(ctx context.Context, bin, dir string, i int) (time.Duration, error) {
	addrs, err := procs.FreeAddrs(1 + len(allinone.Modules))
	if err != nil {
		return 0, err
	}
	env := map[string]string{"BERTH_HTTP_ADDR": addrs[0], "BERTH_DEMO_DIR": filepath.Join(dir, "demo"+strconv.Itoa(i)), "BERTH_LOG_LEVEL": "warn"}
	for j, m := range allinone.Modules {
		env[m.GRPCAddrVar()] = addrs[1+j]
	}
	began := time.Now()
	p, err := procs.Start("all-in-one-"+strconv.Itoa(i), bin, dir, env)
	if err != nil {
		return 0, err
	}
	defer p.Stop()
	if err := p.WaitReady(time.Minute, readyPoll, procs.HTTPOK(ctx, "http://"+addrs[0]+ops.ReadyPath)); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
