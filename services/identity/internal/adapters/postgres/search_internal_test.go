package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// searchFixture is an app with n users in PostgreSQL, their keys in search order.
type searchFixture struct {
	pool  *pgxpool.Pool
	store *Store
	appID string
	keys  []keyset.Key
}

// newSearchFixture stores an app and copies n users into it (COPY: 100,000 rows take a second or
// two), with random addresses in mixed case, so that neither insertion order nor case is the
// search's order, then vacuums and analyzes the table as autovacuum would after such a load, so
// that no vacuum of the load runs during the measurements.
func newSearchFixture(tb testing.TB, n int) searchFixture {
	tb.Helper()
	ctx := context.Background()
	pool := pgtest.New(tb, "identity", Migrate)
	store := New(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	project := domain.Project{ID: uuid.NewString(), Name: "search", CreatedAt: now}
	a := domain.App{ID: uuid.NewString(), ProjectID: project.ID, Name: "search", Enabled: true, PublicKeyPEM: "-",
		SealedPrivateKey: []byte{1}, AccessTokenTTL: time.Minute, RefreshTokenTTL: time.Hour,
		EmailVerification: domain.VerificationOptional, MFA: domain.MFAOptional, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateProject(ctx, project); err != nil {
		tb.Fatal(err)
	}
	if err := store.CreateApp(ctx, a); err != nil {
		tb.Fatal(err)
	}
	rows := make([][]any, n)
	f := searchFixture{pool: pool, store: store, appID: a.ID, keys: make([]keyset.Key, n)}
	random := make([]byte, 6)
	for i := range rows {
		if _, err := rand.Read(random); err != nil {
			tb.Fatal(err)
		}
		local := hex.EncodeToString(random)
		email := fmt.Sprintf("%s.User%d@Example%d.test", local, i, i%7)
		id := uuid.NewString()
		rows[i] = []any{id, a.ID, email, "User " + local, now, now}
		f.keys[i] = app.UserKey(domain.User{ID: id, Email: email})
	}
	pgtest.CopyAnalyzed(tb, pool, "users", []string{"id", "app_id", "email", "name", "created_at", "updated_at"}, rows)
	slices.SortFunc(f.keys, keyset.Key.Compare)
	return f
}

// searches are the pages the console asks for most: the first page of every user, a page deep in
// that list (after the cursor of the 90th percent), the first page of a prefix.
func (f searchFixture) searches() map[string]keyset.Search {
	deep := f.keys[len(f.keys)*9/10]
	return map[string]keyset.Search{
		"first":  {Limit: keyset.DefaultPageSize + 1},
		"deep":   {After: &deep, Limit: keyset.DefaultPageSize + 1},
		"prefix": {Query: keyset.Query{Prefix: f.keys[len(f.keys)/2].Text[:2]}, Limit: keyset.DefaultPageSize + 1},
	}
}

func TestUserSearchReadsOneRangeOfItsIndexInEitherPlan(t *testing.T) {
	f := newSearchFixture(t, 20_000)
	for name, q := range f.searches() {
		t.Run(name, func(t *testing.T) {
			sql, args := searchUsersSQL(f.appID, q)
			pgtest.RequireIndexRange(t, f.pool, "users_app_email_search", sql, args...)
		})
	}
}

// BenchmarkSearchUsers measures the console's user search on PostgreSQL with 100,000 users of one
// app, through the use case and the store (search) and as the bare statement over pgx (baseline),
// for a first page, a deep page (after a cursor) and a prefix's first page; each reports its p50
// and p99 in milliseconds beside ns/op (the goal: p99 ≤ 100 ms per page).
func BenchmarkSearchUsers(b *testing.B) {
	f := newSearchFixture(b, 100_000)
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	svc, err := app.New(app.Config{Store: f.store, Pepper: []byte("pepper"), Box: box, Issuer: "bench",
		Passwords: password.Params{MemoryKiB: 64, Time: 1, Threads: 1}})
	if err != nil {
		b.Fatal(err)
	}
	pgtest.BenchSearchPages(b, f.pool, []string{"first", "deep", "prefix"}, f.searches(),
		func(q keyset.Search) (string, []any) { return searchUsersSQL(f.appID, q) },
		func(ctx context.Context, prefix, after string) (int, error) {
			p, err := svc.SearchUsers(ctx, f.appID, prefix, keyset.DefaultPageSize, after)
			return len(p.Users), err
		})
}
