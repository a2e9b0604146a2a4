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
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// searchFixture is an app with n tenants in PostgreSQL, their keys in search order.
type searchFixture struct {
	pool  *pgxpool.Pool
	store *Store
	appID string
	keys  []keyset.Key
}

// newSearchFixture copies n tenants of one app into a fresh database (COPY), named like sign-ups'
// tenants (the user's address, random and in mixed case) with every tenth a company name, then
// vacuums and analyzes the table as autovacuum would after such a load, so that no vacuum of the
// load runs during the measurements.
func newSearchFixture(tb testing.TB, n int) searchFixture {
	tb.Helper()
	pool := pgtest.New(tb, "tenant", Migrate)
	f := searchFixture{pool: pool, store: New(pool), appID: uuid.NewString(), keys: make([]keyset.Key, n)}
	now := time.Now().UTC()
	rows := make([][]any, n)
	random := make([]byte, 6)
	for i := range rows {
		if _, err := rand.Read(random); err != nil {
			tb.Fatal(err)
		}
		name := fmt.Sprintf("%s.User%d@Example%d.test", hex.EncodeToString(random), i, i%7)
		if i%10 == 0 {
			name = fmt.Sprintf("Company %s %d", hex.EncodeToString(random), i)
		}
		id := uuid.NewString()
		rows[i] = []any{id, f.appID, name, now, now}
		f.keys[i] = app.TenantKey(domain.Tenant{ID: id, Name: name})
	}
	pgtest.CopyAnalyzed(tb, pool, "tenants", []string{"id", "app_id", "name", "created_at", "updated_at"}, rows)
	slices.SortFunc(f.keys, keyset.Key.Compare)
	return f
}

// searches are the pages the console asks for most: the first page of every tenant, a page deep
// in that list (after the cursor of the 90th percent), the first page of a prefix.
func (f searchFixture) searches() map[string]keyset.Search {
	deep := f.keys[len(f.keys)*9/10]
	return map[string]keyset.Search{
		"first":  {Limit: keyset.DefaultPageSize + 1},
		"deep":   {After: &deep, Limit: keyset.DefaultPageSize + 1},
		"prefix": {Query: keyset.Query{Prefix: "company"}, Limit: keyset.DefaultPageSize + 1},
	}
}

func TestTenantSearchReadsOneRangeOfItsIndexInEitherPlan(t *testing.T) {
	f := newSearchFixture(t, 20_000)
	for name, q := range f.searches() {
		t.Run(name, func(t *testing.T) {
			sql, args := searchTenantsSQL(f.appID, q)
			pgtest.RequireIndexRange(t, f.pool, "tenants_app_name_search", sql, args...)
		})
	}
}

// BenchmarkSearchTenants measures the console's tenant search on PostgreSQL with 100,000 tenants
// of one app, through the use case and the store (search) and as the bare statement over pgx
// (baseline), for a first page, a deep page (after a cursor) and a prefix's first page; each
// reports its p50 and p99 in milliseconds beside ns/op (the goal: p99 ≤ 100 ms per page).
func BenchmarkSearchTenants(b *testing.B) {
	f := newSearchFixture(b, 100_000)
	svc, err := app.New(app.Config{Store: f.store, NewID: uuid.NewString})
	if err != nil {
		b.Fatal(err)
	}
	pgtest.BenchSearchPages(b, f.pool, []string{"first", "deep", "prefix"}, f.searches(),
		func(q keyset.Search) (string, []any) { return searchTenantsSQL(f.appID, q) },
		func(ctx context.Context, prefix, after string) (int, error) {
			p, err := svc.SearchTenants(ctx, f.appID, prefix, keyset.DefaultPageSize, after)
			return len(p.Tenants), err
		})
}
