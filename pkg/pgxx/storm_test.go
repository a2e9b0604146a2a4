package pgxx_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

// withPoolSize is url with the pool limited to n connections.
func withPoolSize(t *testing.T, url string, n int) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", fmt.Sprint(n))
	u.RawQuery = q.Encode()
	return u.String()
}

// A burst of clients that hang up (a load balancer's retry storm, a page reloaded by everyone at
// once) abandons many reads mid-query at the same time. The pool must come out of it with the
// sessions it went in with: no connection closed, none opened, the same PostgreSQL backends. The
// same storm on a pool with pgx's default handling, which closes the connection of every
// cancelled query, is run first as the control: it must cost that pool new sessions, or the storm
// did not abandon reads mid-query and proves nothing. Both figures are logged for
// docs/performance.md ("Disconnect storm").
func TestADisconnectStormCostsThePoolNoConnections(t *testing.T) {
	const size, callers, reads = 8, 24, 8
	url := withPoolSize(t, pgtest.URL(t, "pgxx-empty", func(context.Context, *pgxpool.Pool) error { return nil }), size)
	ctx := context.Background()

	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := pgxpool.NewWithConfig(ctx, cfg) // pgx's default context handling
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	control := runStorm(t, plain, size, callers, reads)
	plain.Close()
	t.Logf("pgx's default: %s", control)
	if control.newConns == 0 {
		t.Fatal("the storm cost pgx's default handling no connection: it abandoned no read mid-query")
	}

	pool, err := pgxx.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	got := runStorm(t, pool, size, callers, reads)
	t.Logf("pgxx.Open: %s", got)
	if got.newConns != 0 {
		t.Errorf("the storm cost the pool %d new connections, want none", got.newConns)
	}
	if !slices.Equal(got.backendsBefore, got.backendsAfter) {
		t.Errorf("PostgreSQL's backends changed over the storm: %v before, %v after", got.backendsBefore, got.backendsAfter)
	}
	// An abandoned read holds its connection until it ends: a short one until it finishes, a long
	// one until the server has cancelled it (the grace, the cancel request, and pgx's pause after
	// it), never anywhere near the long read's 5 s.
	if got.slowest > 2*time.Second {
		t.Errorf("the slowest abandoned read returned %s after it started, want it cancelled long before its end", got.slowest)
	}
}

// stormResult is what a storm cost a pool.
type stormResult struct {
	abandoned                     int
	newConns                      int64
	backendsBefore, backendsAfter []int
	took, slowest                 time.Duration
}

func (r stormResult) String() string {
	return fmt.Sprintf("%d reads abandoned mid-query in %s (slowest return %s): %d new connections; backends %d before, %d after",
		r.abandoned, r.took.Round(time.Millisecond), r.slowest.Round(time.Millisecond), r.newConns, len(r.backendsBefore), len(r.backendsAfter))
}

// runStorm opens all size connections of pool, then has callers goroutines run reads reads each on
// a connection of the pool, every one abandoned 1-20 ms after it started: every second read would
// sleep 5 s on the server (it must be cancelled), the others 10-40 ms (they may finish).
func runStorm(t *testing.T, pool *pgxpool.Pool, size, callers, reads int) stormResult {
	t.Helper()
	ctx := context.Background()
	held := make([]*pgxpool.Conn, size)
	for i := range held {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held[i] = c
	}
	for _, c := range held {
		c.Release()
	}
	backends := func() []int {
		var pids []int
		// Sessions that ended a moment ago may still be listed while their backends exit.
		time.Sleep(200 * time.Millisecond)
		rows, err := pool.Query(ctx, "select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' order by pid")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var pid int
			if err := rows.Scan(&pid); err != nil {
				t.Fatal(err)
			}
			pids = append(pids, pid)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return pids
	}
	r := stormResult{abandoned: callers * reads, backendsBefore: backends()}
	opened := pool.Stat().NewConnsCount()
	start := time.Now()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		slowest time.Duration
	)
	for c := range callers {
		wg.Go(func() {
			for i := range reads {
				n := c*reads + i
				stmt := fmt.Sprintf("select pg_sleep(%g)", 0.01+float64(n%4)*0.01)
				if n%2 == 1 {
					stmt = "select pg_sleep(5)"
				}
				conn, err := pool.Acquire(ctx) // the read starts on a connection, then its caller leaves
				if err != nil {
					t.Error(err)
					return
				}
				readCtx, hangUp := context.WithCancel(ctx)
				time.AfterFunc(time.Duration(1+n%20)*time.Millisecond, hangUp)
				began := time.Now()
				_, _ = conn.Exec(readCtx, stmt) // its outcome is for nobody: the connection is what counts
				took := time.Since(began)
				conn.Release()
				hangUp()
				mu.Lock()
				slowest = max(slowest, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.took, r.slowest = time.Since(start), slowest
	r.newConns = pool.Stat().NewConnsCount() - opened
	r.backendsAfter = backends()
	return r
}
