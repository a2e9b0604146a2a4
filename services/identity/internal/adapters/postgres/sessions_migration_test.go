package postgres

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// migrateBeforeSessions applies the identity schema as it was before 0008_sessions.
func migrateBeforeSessions(ctx context.Context, pool *pgxpool.Pool) error {
	before := fstest.MapFS{}
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() >= "0008" {
			continue
		}
		b, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return err
		}
		before[e.Name()] = &fstest.MapFile{Data: b}
	}
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: before},
		pgxx.Set{Component: "events", Files: events.Migrations}, pgxx.KeyCheckSet)
}

// Families stored before sessions were recorded become sessions last used at their newest token's
// creation and ending with its expiry, so the upgrade neither drops live sessions from the list
// nor lists ended ones.
func TestTheSessionsMigrationDatesFamiliesByTheirNewestToken(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t, "identity-before-sessions", migrateBeforeSessions)
	s := New(pool)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	// The rows are written as the schema before 0008 stood: the store's own statements follow the
	// newest schema, which later migrations may have widened.
	projectID, appID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, seed := range []struct {
		sql  string
		args []any
	}{
		{`insert into projects (id, name, created_at) values ($1, 'p', $2)`, []any{projectID, t0}},
		{`insert into apps (id, project_id, name, enabled, public_key_pem, sealed_private_key, created_at, updated_at)
			values ($1, $2, 'a', true, 'pem', '\x01', $3, $3)`, []any{appID, projectID, t0}},
		{`insert into users (id, app_id, email, created_at, updated_at) values ($1, $2, 'u@example.test', $3, $3)`, []any{userID, appID, t0}},
	} {
		if _, err := pool.Exec(ctx, seed.sql, seed.args...); err != nil {
			t.Fatal(err)
		}
	}
	a, u := domain.App{ID: appID}, domain.User{ID: userID}
	rotated, untouched := uuid.NewString(), uuid.NewString()
	for _, id := range []string{rotated, untouched} {
		if _, err := pool.Exec(ctx, `insert into refresh_families (id, app_id, user_id, redirect_uri, scope, auth_time, created_at)
			values ($1, $2, $3, 'https://app.test/cb', 'openid', $4, $4)`, id, a.ID, u.ID, t0); err != nil {
			t.Fatal(err)
		}
	}
	for _, tok := range []struct {
		family           string
		created, expires time.Time
		used             *time.Time
	}{
		{rotated, t0, t0.Add(time.Hour), ptr(t0.Add(20 * time.Minute))},
		{rotated, t0.Add(20 * time.Minute), t0.Add(80 * time.Minute), nil},
		{untouched, t0, t0.Add(time.Hour), nil},
	} {
		_, hash, err := domain.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `insert into refresh_tokens (hash, family_id, created_at, expires_at, used_at) values ($1, $2, $3, $4, $5)`,
			hash, tok.family, tok.created, tok.expires, tok.used); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}

	got, err := s.ListSessions(ctx, a.ID, u.ID, t0.Add(30*time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != rotated || !got[0].LastUsedAt.Equal(t0.Add(20*time.Minute)) || !got[0].ExpiresAt.Equal(t0.Add(80*time.Minute)) ||
		got[1].ID != untouched || !got[1].LastUsedAt.Equal(t0) || !got[1].ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("sessions after the migration = %+v", got)
	}
	if got, err := s.ListSessions(ctx, a.ID, u.ID, t0.Add(70*time.Minute), 10); err != nil || len(got) != 1 || got[0].ID != rotated {
		t.Fatalf("sessions past the untouched family's hour = %+v, %v; want the rotated one alone", got, err)
	}
}

func ptr[T any](v T) *T { return &v }
