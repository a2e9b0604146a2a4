package postgres

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// migrateBefore applies the identity migrations numbered below first (their file names' prefix),
// so a test can hold rows as an older deployment wrote them.
func migrateBefore(first string) func(context.Context, *pgxpool.Pool) error {
	return func(ctx context.Context, pool *pgxpool.Pool) error {
		sub, err := fs.Sub(migrationFiles, "migrations")
		if err != nil {
			return err
		}
		older := fstest.MapFS{}
		err = fs.WalkDir(sub, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path >= first {
				return err
			}
			b, err := fs.ReadFile(sub, path)
			older[path] = &fstest.MapFile{Data: b}
			return err
		})
		if err != nil {
			return err
		}
		return pgxx.Migrate(ctx, pool, Component, older)
	}
}

func TestAppsThatExistedBeforeTheVerificationPolicyKeepOptionalVerification(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t, "identity_before_0010", migrateBefore("0010"))
	projectID, appID := uuid.NewString(), uuid.NewString()
	if _, err := pool.Exec(ctx, `insert into projects (id, name, created_at) values ($1, 'p', now())`, projectID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `insert into apps (id, project_id, name, enabled, public_key_pem, sealed_private_key, created_at, updated_at)
		values ($1, $2, 'old', true, 'pem', '\x01', now(), now())`, appID, projectID); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	a, err := New(pool).GetApp(ctx, appID)
	if err != nil {
		t.Fatal(err)
	}
	if a.EmailVerification != domain.VerificationOptional {
		t.Fatalf("an app created before migration 0010 has policy %q, want %q", a.EmailVerification, domain.VerificationOptional)
	}
	// The default is gone: an insert that forgets the policy fails instead of silently choosing one.
	_, err = pool.Exec(ctx, `insert into apps (id, project_id, name, enabled, public_key_pem, sealed_private_key, created_at, updated_at)
		values ($1, $2, 'new', true, 'pem', '\x01', now(), now())`, uuid.NewString(), projectID)
	if err == nil || !strings.Contains(err.Error(), "email_verification") {
		t.Fatalf("insert without a policy: %v, want a not-null violation on email_verification", err)
	}
}

func TestAppsThatExistedBeforeTheMFAPolicyLetUsersEnrolAndOldSessionsSayPassword(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t, "identity_before_0012", migrateBefore("0012"))
	projectID, appID, userID, familyID := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`insert into projects (id, name, created_at) values ($1, 'p', now())`, []any{projectID}},
		{`insert into apps (id, project_id, name, enabled, public_key_pem, sealed_private_key, created_at, updated_at, email_verification)
			values ($1, $2, 'old', true, 'pem', '\x01', now(), now(), 'optional')`, []any{appID, projectID}},
		{`insert into users (id, app_id, email, created_at, updated_at) values ($1, $2, 'old@example.test', now(), now())`, []any{userID, appID}},
		{`insert into refresh_families (id, app_id, user_id, redirect_uri, scope, auth_time, created_at, last_used_at, expires_at)
			values ($1, $2, $3, 'https://app.test/cb', '', now(), now(), now(), now() + interval '1 day')`, []any{familyID, appID, userID}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	a, err := New(pool).GetApp(ctx, appID)
	if err != nil {
		t.Fatal(err)
	}
	if a.MFA != domain.MFAOptional || a.PasskeySignIn {
		t.Fatalf("an app created before migration 0012 has MFA policy %q and passkey sign-in %v, want %q and off", a.MFA, a.PasskeySignIn, domain.MFAOptional)
	}
	live, err := New(pool).ListSessions(ctx, appID, userID, time.Now(), 10)
	if err != nil || len(live) != 1 || !slices.Equal(live[0].AMR, []string{domain.AMRPassword}) {
		t.Fatalf("a session from before migration 0012 = %+v (%v), want amr [pwd]", live, err)
	}
}
