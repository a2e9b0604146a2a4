package postgres

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/app"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is the name billing's migrations are recorded under.
const Component = "billing"

// Migrate applies billing's migrations, the shared outbox tables and the key checks (pgxx.KeyCheckSet).
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: migrationFiles, Dir: "migrations"},
		pgxx.Set{Component: "events", Files: events.Migrations}, pgxx.KeyCheckSet)
}

// Store implements app.Store: every storage port over one database, so a write that spans two
// aggregates is one transaction. Each port's methods are in the file named for it.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

var _ app.Store = (*Store)(nil)

// isUUID guards uuid columns: a malformed id matches nothing, rather than failing the query.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}
