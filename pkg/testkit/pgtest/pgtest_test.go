package pgtest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestNewGivesEachTestItsOwnDatabaseFromOneTemplate(t *testing.T) {
	var migrations atomic.Int32
	migrate := func(ctx context.Context, pool *pgxpool.Pool) error {
		migrations.Add(1)
		_, err := pool.Exec(ctx, "create table item (name text primary key)")
		return err
	}
	var dbs []string
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pool := pgtest.New(t, "pgtest-self", migrate)
			dbs = append(dbs, pool.Config().ConnConfig.Database)
			if _, err := pool.Exec(ctx, "insert into item (name) values ($1)", name); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := pool.QueryRow(ctx, "select count(*) from item").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Fatalf("database holds %d rows, want only this test's one", n)
			}
		})
	}
	// A template left by a concurrent run of this very binary is reused, hence at most once.
	if n := migrations.Load(); n > 1 {
		t.Fatalf("migrate ran %d times, want the template built once", n)
	}
	if dbs[0] == dbs[1] {
		t.Fatalf("both tests got database %s", dbs[0])
	}

	probe := pgtest.New(t, "pgtest-self", migrate)
	var left int
	if err := probe.QueryRow(context.Background(), "select count(*) from pg_database where datname = any($1)", dbs).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d test databases survived their tests' cleanup", left)
	}
}

func TestPoolConnStringNamesTheClone(t *testing.T) {
	pool := pgtest.New(t, "pgtest-connstring", func(context.Context, *pgxpool.Pool) error { return nil })
	cfg, err := pgxpool.ParseConfig(pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.ConnConfig.Database, pool.Config().ConnConfig.Database; got != want || got == "postgres" {
		t.Fatalf("ConnString names database %q, the pool uses %q", got, want)
	}
}

func TestURLNamesAFreshMigratedDatabaseDroppedAfterTheTest(t *testing.T) {
	migrate := func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := pool.Exec(ctx, "create table item (name text primary key)")
		return err
	}
	ctx := context.Background()
	var db string
	t.Run("use", func(t *testing.T) {
		url := pgtest.URL(t, "pgtest-url", migrate)
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		if db = cfg.ConnConfig.Database; db == "postgres" {
			t.Fatalf("URL names the server's shared database: %s", url)
		}
		// What the code under test does with the URL: open its own pool and find the schema.
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, "insert into item (name) values ('x')"); err != nil {
			t.Fatalf("the database is not migrated: %v", err)
		}
	})
	probe := pgtest.New(t, "pgtest-url", migrate)
	var left bool
	if err := probe.QueryRow(ctx, "select exists (select 1 from pg_database where datname = $1)", db).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left {
		t.Fatalf("database %s survived its test", db)
	}
}
