package pgxx

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Open parses url, builds a pool and pings the server, all bounded by ctx, so that a service with a
// wrong URL or an unreachable database fails at start-up instead of on its first request.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx redacts the password in its parse errors, so the error can be logged as it is.
		return nil, fmt.Errorf("pgxx: parse database url: %w", err)
	}
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
