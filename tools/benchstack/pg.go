package main

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// databases are the run's databases on the server: the stack creates <base>_<module> for every
// module of BERTH_DATABASE_URL=<server>/<base>; the benchmark drops them at the end.
type databases struct {
	admin *pgxpool.Pool // on the server's maintenance database, never one of the run's
	names []string
}

// withDatabase is the server URL naming database db.
func withDatabase(server, db string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("database url is not a URL (postgres://...)")
	}
	u.Path = "/" + db
	return u.String(), nil
}

func openAdmin(ctx context.Context, server string) (*pgxpool.Pool, string, error) {
	admin, err := pgxpool.New(ctx, server)
	if err != nil {
		return nil, "", err
	}
	var version string
	if err := admin.QueryRow(ctx, "show server_version").Scan(&version); err != nil {
		admin.Close()
		return nil, "", fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return admin, version, nil
}

// transactions is the number of transactions committed and rolled back so far in the run's
// databases, by anyone: the server under load, the stack's background work (outbox relays,
// consumers), and nothing of the benchmark's own, whose admin connection is elsewhere.
//
// PostgreSQL (15+) publishes a backend's counts when it goes idle, at most once a second, and a
// backend that went idle within that second publishes them only after 10 s more of idleness. The
// benchmark therefore reads the counters right after a warm-up at the same load (the counts still
// pending then are about those pending at the end of the measurement, which are missed) and waits
// -settle between phases so that one phase's late counts never land in the next.
func (d databases) transactions(ctx context.Context) (map[string]int64, error) {
	rows, err := d.admin.Query(ctx, "select datname, (xact_commit + xact_rollback)::bigint from pg_stat_database where datname = any($1)", d.names)
	if err != nil {
		return nil, err
	}
	n := map[string]int64{}
	for rows.Next() {
		var db string
		var x int64
		if err := rows.Scan(&db, &x); err != nil {
			rows.Close()
			return nil, err
		}
		n[db] = x
	}
	return n, rows.Err()
}

// drop removes the run's databases, closing any session still on them.
func (d databases) drop(ctx context.Context) error {
	for _, db := range d.names {
		if _, err := d.admin.Exec(ctx, "drop database if exists "+pgx.Identifier{db}.Sanitize()+" with (force)"); err != nil {
			return fmt.Errorf("drop %s: %w", db, err)
		}
	}
	return nil
}
