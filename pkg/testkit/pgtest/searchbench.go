package pgtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/pkg/testkit/latency"
)

// BenchSearchPages measures a keyset search for each of searches (in names' order): the store's
// own statement run bare over pgx (name/baseline, sqlOf making it) and a full page through the use
// case (name/search, page answering how many rows it returned for a prefix and a cursor), each with
// its p50 and p99 (latency.Measure). A page shorter than keyset.DefaultPageSize fails the benchmark:
// the fixture must hold enough rows after every cursor.
func BenchSearchPages(b *testing.B, pool *pgxpool.Pool, names []string, searches map[string]keyset.Search,
	sqlOf func(keyset.Search) (string, []any), page func(ctx context.Context, prefix, after string) (int, error)) {
	b.Helper()
	ctx := context.Background()
	for _, name := range names {
		q := searches[name]
		b.Run(name+"/baseline", func(b *testing.B) {
			sql, args := sqlOf(q)
			latency.Measure(b, Statement(ctx, pool, sql, args...))
		})
		b.Run(name+"/search", func(b *testing.B) {
			after := ""
			if q.After != nil {
				after = q.After.Encode()
			}
			latency.Measure(b, func() error {
				n, err := page(ctx, q.Prefix, after)
				if err == nil && n != keyset.DefaultPageSize {
					err = fmt.Errorf("a page of %d rows", n)
				}
				return err
			})
		})
	}
}
