package pgxx

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// What a connection does when the context of its statement ends (a caller hung up) while the
// statement runs. pgx's default sets a deadline on the socket at once, so the read fails and the
// connection is closed: every burst of disconnects cost the pool its connections, and the server a
// new session each (authentication, a fresh backend, cold caches). Instead the statement is left
// to finish for cancelGrace (most reads end well within it, and their connection goes back to the
// pool as it was); after that PostgreSQL is asked to cancel it, which ends it with an error on a
// connection that stays usable; only a server that does not answer within deadlineGrace (a broken
// network) gets the socket deadline and loses the connection.
const (
	cancelGrace   = 100 * time.Millisecond
	deadlineGrace = 5 * time.Second
)

// keepConnOnCancel is the pool's context watcher for each connection (see cancelGrace).
func keepConnOnCancel(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.CancelRequestContextWatcherHandler{Conn: c, CancelRequestDelay: cancelGrace, DeadlineDelay: deadlineGrace}
}

// Open parses url, builds a pool and pings the server, all bounded by ctx, so that a service with a
// wrong URL or an unreachable database fails at start-up instead of on its first request.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx redacts the password in its parse errors, so the error can be logged as it is.
		return nil, fmt.Errorf("pgxx: parse database url: %w", err)
	}
	cfg.ConnConfig.BuildContextWatcherHandler = keepConnOnCancel
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgxx: create pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgxx: connect to %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	return pool, nil
}

// OpenMigrated opens the pool and brings its schema up to date with migrate before anyone uses it;
// a failed migration closes the pool again, so a service never runs on a half-known schema.
func OpenMigrated(ctx context.Context, url string, migrate func(context.Context, *pgxpool.Pool) error) (*pgxpool.Pool, error) {
	pool, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgxx: migrate: %w", err)
	}
	return pool, nil
}
