package pgxx_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func emptyDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return pgtest.New(t, "pgxx-empty", func(context.Context, *pgxpool.Pool) error { return nil })
}

// files builds a migration set; each migration appends its version to log so order and repeats show.
func files(versions ...string) fstest.MapFS {
	fsys := fstest.MapFS{
		"0001_log.sql": {Data: []byte(`create table log (n serial primary key, v int not null);
			insert into log (v) values (1);`)},
	}
	for _, v := range versions {
		fsys[v+"_step.sql"] = &fstest.MapFile{Data: []byte("insert into log (v) values (" + strings.TrimLeft(v, "0") + ");")}
	}
	return fsys
}

func logged(t *testing.T, pool *pgxpool.Pool) []int {
	t.Helper()
	rows, err := pool.Query(context.Background(), "select v from log order by n")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestMigrateAppliesInVersionOrderOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDB(t)
	// 0010 sorts after 0002 by number; the map has no order at all.
	fsys := files("0010", "0002", "0003")
	fsys["README.md"] = &fstest.MapFile{Data: []byte("not a migration")}
	for range 2 {
		if err := pgxx.Migrate(ctx, pool, "svc", fsys); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := logged(t, pool), []int{1, 2, 3, 10}; !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v exactly once each", got, want)
	}
}

func TestMigrateSkipsAppliedVersionsAndAppliesNewOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDB(t)
	if err := pgxx.Migrate(ctx, pool, "svc", files("0002")); err != nil {
		t.Fatal(err)
	}
	if err := pgxx.Migrate(ctx, pool, "svc", files("0002", "0003")); err != nil {
		t.Fatal(err)
	}
	if got, want := logged(t, pool), []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
}

func TestMigrateKeepsComponentsApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDB(t)
	if err := pgxx.Migrate(ctx, pool, "a", files()); err != nil {
		t.Fatal(err)
	}
	// Component b has its own version 1, which must run although a's version 1 is recorded.
	other := fstest.MapFS{"0001_other.sql": {Data: []byte("insert into log (v) values (100);")}}
	if err := pgxx.Migrate(ctx, pool, "b", other); err != nil {
		t.Fatal(err)
	}
	if got, want := logged(t, pool), []int{1, 100}; !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
}

func TestConcurrentMigrateAppliesEachVersionOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDB(t)
	fsys := files("0002", "0003")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- pgxx.Migrate(ctx, pool, "svc", fsys) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	if got, want := logged(t, pool), []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
}

func TestFailingMigrationRollsBackAndStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDB(t)
	fsys := files("0003")
	fsys["0002_broken.sql"] = &fstest.MapFile{Data: []byte("create table half (x int); insert into log (v) values (2); select nope;")}
	err := pgxx.Migrate(ctx, pool, "svc", fsys)
	if err == nil || !strings.Contains(err.Error(), "0002_broken.sql") {
		t.Fatalf("err = %v, want an error naming 0002_broken.sql", err)
	}
	if got, want := logged(t, pool), []int{1}; !slices.Equal(got, want) {
		t.Fatalf("applied %v, want only %v (0002 rolled back, 0003 not run)", got, want)
	}
	var half bool
	if err := pool.QueryRow(ctx, "select to_regclass('half') is not null").Scan(&half); err != nil {
		t.Fatal(err)
	}
	if half {
		t.Fatal("table created by the failed migration survived")
	}
	var versions []int
	rows, _ := pool.Query(ctx, "select version from schema_migrations where component = 'svc' order by version")
	if versions, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(versions, []int{1}) {
		t.Fatalf("recorded versions %v, want [1]", versions)
	}
}

func TestMigrateRejectsBadSets(t *testing.T) {
	t.Parallel()
	pool := emptyDB(t)
	tests := []struct {
		name      string
		component string
		fsys      fstest.MapFS
		wantErr   string
	}{
		{"misnamed sql file", "svc", fstest.MapFS{"create_users.sql": {Data: []byte("select 1")}}, "NNNN_description.sql"},
		{"repeated version", "svc", fstest.MapFS{"0001_a.sql": {}, "01_b.sql": {}}, "share version 1"},
		{"version zero", "svc", fstest.MapFS{"0000_a.sql": {}}, "positive"},
		{"empty component", " ", files(), "component"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pgxx.Migrate(context.Background(), pool, tt.component, tt.fsys)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestInTx(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	insert := func(v int) func(context.Context, pgx.Tx) error {
		return func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "insert into log (v) values ($1)", v)
			return err
		}
	}
	tests := []struct {
		name    string
		run     func(ctx context.Context, pool *pgxpool.Pool) error
		wantErr error
		want    []int
	}{
		{
			name: "commits when fn succeeds",
			run:  func(ctx context.Context, pool *pgxpool.Pool) error { return pgxx.InTx(ctx, pool, insert(2)) },
			want: []int{1, 2},
		},
		{
			name: "rolls back and returns fn's error",
			run: func(ctx context.Context, pool *pgxpool.Pool) error {
				return pgxx.InTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
					if err := insert(2)(ctx, tx); err != nil {
						return err
					}
					return errBoom
				})
			},
			wantErr: errBoom,
			want:    []int{1},
		},
		{
			name: "nested call joins the outer transaction and commits with it",
			run: func(ctx context.Context, pool *pgxpool.Pool) error {
				return pgxx.InTx(ctx, pool, func(ctx context.Context, _ pgx.Tx) error {
					if err := pgxx.InTx(ctx, pool, insert(2)); err != nil {
						return err
					}
					// Q sees the joined write because it runs in the same transaction.
					var n int
					if err := pgxx.Q(ctx, pool).QueryRow(ctx, "select count(*) from log").Scan(&n); err != nil || n != 2 {
						return errors.New("nested write not visible through Q")
					}
					return nil
				})
			},
			want: []int{1, 2},
		},
		{
			name: "outer rollback undoes the nested call's committed part",
			run: func(ctx context.Context, pool *pgxpool.Pool) error {
				return pgxx.InTx(ctx, pool, func(ctx context.Context, _ pgx.Tx) error {
					if err := pgxx.InTx(ctx, pool, insert(2)); err != nil {
						return err
					}
					return errBoom
				})
			},
			wantErr: errBoom,
			want:    []int{1},
		},
		{
			name: "a failed nested call undoes only its own part",
			run: func(ctx context.Context, pool *pgxpool.Pool) error {
				return pgxx.InTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
					if err := insert(2)(ctx, tx); err != nil {
						return err
					}
					err := pgxx.InTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
						_ = insert(3)(ctx, tx)
						_, err := tx.Exec(ctx, "select nope") // aborts the savepoint, not the outer tx
						return err
					})
					if err == nil {
						return errors.New("nested failure not reported")
					}
					return nil
				})
			},
			want: []int{1, 2},
		},
		{
			name: "Q outside a transaction uses the pool",
			run: func(ctx context.Context, pool *pgxpool.Pool) error {
				_, err := pgxx.Q(ctx, pool).Exec(ctx, "insert into log (v) values (2)")
				return err
			},
			want: []int{1, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool := pgtest.New(t, "pgxx-log", func(ctx context.Context, pool *pgxpool.Pool) error {
				return pgxx.Migrate(ctx, pool, "test", files())
			})
			if err := tt.run(ctx, pool); !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := logged(t, pool); !slices.Equal(got, tt.want) {
				t.Fatalf("rows %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOpenMigratedMigratesBeforeUseAndClosesOnFailure(t *testing.T) {
	url := pgtest.URL(t, "pgxx-empty", func(context.Context, *pgxpool.Pool) error { return nil })
	ctx := context.Background()
	pool, err := pgxx.OpenMigrated(ctx, url, func(ctx context.Context, p *pgxpool.Pool) error {
		return pgxx.Migrate(ctx, p, "openmigrated", files("0002"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := logged(t, pool); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("log = %v after OpenMigrated, want [1 2]", got)
	}
	pool.Close()

	var handed *pgxpool.Pool
	_, err = pgxx.OpenMigrated(ctx, url, func(_ context.Context, p *pgxpool.Pool) error {
		handed = p
		return errors.New("bad migration")
	})
	if err == nil || !strings.Contains(err.Error(), "bad migration") {
		t.Fatalf("err = %v, want the migration's error", err)
	}
	if handed.Ping(ctx) == nil {
		t.Fatal("the pool of a failed migration was left open")
	}
}

// Callers that hang up mid-statement do not cost the pool its connections: a short read whose
// caller left finishes and its connection goes back as it was; a long one is cancelled by the
// server and its connection is kept too. With one connection allowed, a storm of abandoned
// statements is served by the same backend process throughout, and each abandoned statement
// returns promptly. (pgx's default handler closed the connection every time: one new session per
// abandoned statement.)
func TestAbandonedStatementsKeepTheirConnection(t *testing.T) {
	url := withPoolSize(t, pgtest.URL(t, "pgxx-empty", func(context.Context, *pgxpool.Pool) error { return nil }), 1)
	pool, err := pgxx.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	backend := func() int {
		var pid int
		if err := pool.QueryRow(context.Background(), "select pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	first := backend()
	for i, stmt := range []string{"select pg_sleep(0.02)", "select pg_sleep(30)", "select pg_sleep(0.02)", "select pg_sleep(30)"} {
		ctx, hangUp := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, hangUp)
		start := time.Now()
		_, _ = pool.Exec(ctx, stmt) // either outcome is the caller's to ignore; the connection is what counts
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("statement %d (%s) returned %s after its caller left", i, stmt, took)
		}
		hangUp()
		if pid := backend(); pid != first {
			t.Fatalf("after abandoned statement %d (%s) the pool reconnected: backend %d, was %d", i, stmt, pid, first)
		}
	}
	if n := pool.Stat().NewConnsCount(); n != 1 {
		t.Errorf("the pool opened %d connections for the storm, want 1", n)
	}
}
