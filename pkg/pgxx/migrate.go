package pgxx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrateLockKey is the pg_advisory_lock key that serialises migrators: the ASCII bytes of "berthmig"
// read as a big-endian int64, so it is recognisable in pg_locks. It is one key for every component:
// they share schema_migrations and start-up migrations are short, so one lock per database is
// simpler than one per component.
const migrateLockKey int64 = 0x62657274686d6967

// migrationName is NNNN_description.sql; the number is the version.
var migrationName = regexp.MustCompile(`^([0-9]+)_[A-Za-z0-9_-]+\.sql$`)

type migration struct {
	version int
	name    string
}

// Migrate applies the forward-only migrations found at the root of fsys, named NNNN_description.sql,
// in version order, each in its own transaction together with its (component, version) row in
// schema_migrations. Versions already recorded for component are skipped, so calling Migrate on every
// start-up is cheap. A session-level advisory lock serialises concurrent migrators (several replicas
// starting at once): the second one waits, then finds everything applied. component lets several
// independent sets (a service's own and the shared "events" set) live in one database.
//
// A failing migration is rolled back and Migrate returns an error naming it; the versions before it
// stay applied. Other files in fsys are ignored, but a .sql file that does not follow the naming rule
// or repeats a version is an error rather than something silently skipped.
func Migrate(ctx context.Context, pool *pgxpool.Pool, component string, fsys fs.FS) error {
	if strings.TrimSpace(component) == "" {
		return errors.New("pgxx: migrate: component must not be empty")
	}
	migrations, err := readMigrations(fsys)
	if err != nil {
		return fmt.Errorf("pgxx: migrate %s: %w", component, err)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgxx: migrate %s: acquire connection: %w", component, err)
	}
	defer conn.Release()
	// The lock belongs to this session, so every statement below runs on conn.
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", migrateLockKey); err != nil {
		return fmt.Errorf("pgxx: migrate %s: take lock: %w", component, err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", migrateLockKey); err != nil {
			// A connection still holding the lock must not go back to the pool, or every later
			// migrator would wait on it forever; closing the session releases the lock.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()

	// Created under the lock: concurrent "create table if not exists" can otherwise fail on the
	// catalog's unique index.
	if _, err := conn.Exec(ctx, `create table if not exists schema_migrations (
		component  text not null,
		version    int not null,
		applied_at timestamptz not null default now(),
		primary key (component, version))`); err != nil {
		return fmt.Errorf("pgxx: migrate %s: create schema_migrations: %w", component, err)
	}
	rows, err := conn.Query(ctx, "select version from schema_migrations where component = $1", component)
	if err != nil {
		return fmt.Errorf("pgxx: migrate %s: read applied versions: %w", component, err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("pgxx: migrate %s: read applied versions: %w", component, err)
	}

	for _, m := range migrations {
		if slices.Contains(applied, int32(m.version)) {
			continue
		}
		body, err := fs.ReadFile(fsys, m.name)
		if err != nil {
			return fmt.Errorf("pgxx: migrate %s: read %s: %w", component, m.name, err)
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// Without arguments pgx uses the simple protocol, so a file may hold several statements.
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "insert into schema_migrations (component, version) values ($1, $2)", component, m.version)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgxx: migrate %s: apply %s: %w", component, m.name, err)
		}
	}
	return nil
}

// readMigrations lists the migrations at the root of fsys in version order.
func readMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("%s: migration files are named NNNN_description.sql", e.Name())
		}
		version, err := strconv.Atoi(m[1])
		if err != nil || version <= 0 || version > 1<<31-1 {
			return nil, fmt.Errorf("%s: version must be a positive 32-bit number", e.Name())
		}
		if other, dup := seen[version]; dup {
			return nil, fmt.Errorf("%s and %s share version %d", other, e.Name(), version)
		}
		seen[version] = e.Name()
		out = append(out, migration{version: version, name: e.Name()})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// Set is one component's migrations, for a database that holds several (a service's own and the
// shared "events" set).
type Set struct {
	Component string
	Files     fs.FS
	Dir       string // the folder of Files the NNNN_description.sql files are in; "" is its root
}

// MigrateSets applies each set in order (Migrate), naming the component of a failure.
func MigrateSets(ctx context.Context, pool *pgxpool.Pool, sets ...Set) error {
	for _, s := range sets {
		files := s.Files
		if s.Dir != "" {
			sub, err := fs.Sub(s.Files, s.Dir)
			if err != nil {
				return fmt.Errorf("%s migrations: %w", s.Component, err)
			}
			files = sub
		}
		if err := Migrate(ctx, pool, s.Component, files); err != nil {
			return fmt.Errorf("%s migrations: %w", s.Component, err)
		}
	}
	return nil
}
