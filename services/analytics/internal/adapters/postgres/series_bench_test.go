package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/testkit/latency"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// seriesYear is the year of facts the series benchmark reads, ending on its last day.
var seriesYear = struct{ first, last time.Time }{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}

// seriesLoad is the year of one app the series benchmark seeds: 100,000 users and as many tenants
// created over it, 1,000 sign-ins a day by those users, 20,000 subscriptions started (5,000 of
// them ended), 120,000 subscription payments in two currencies, 30,000 one-time payments, 5,000
// failed payments and 2,000 freezes.
var seriesLoad = []struct {
	kind  domain.FactKind
	count int
}{
	{domain.FactNewUser, 100_000}, {domain.FactNewTenant, 100_000}, {domain.FactSubscriptionRun, 20_000},
	{domain.FactSubscriptionEnd, 5_000}, {domain.FactRecurring, 120_000}, {domain.FactOneTime, 30_000},
	{domain.FactPaymentFailure, 5_000}, {domain.FactTenantFrozen, 2_000},
}

const (
	seriesUsers         = 100_000
	seriesSignInsPerDay = 1_000
)

// seedSeriesYear copies the year of appID into the store's tables, each fact on a day spread over
// the year (a subscription ends after it started), and analyzes them and the roll-ups their
// triggers kept.
func seedSeriesYear(tb testing.TB, pool *pgxpool.Pool, appID string) {
	tb.Helper()
	ctx := context.Background()
	days := int(seriesYear.last.Sub(seriesYear.first).Hours()/24) + 1
	users := make([]uuid.UUID, seriesUsers)
	for i := range users {
		users[i] = uuid.New()
	}
	var facts [][]any
	for _, l := range seriesLoad {
		for i := range l.count {
			day, key, subject, currency, amount := seriesYear.first.AddDate(0, 0, i%days), fmt.Sprintf("%s-%d", l.kind, i), "", "", int64(0)
			switch l.kind {
			case domain.FactSubscriptionRun, domain.FactSubscriptionEnd:
				key = fmt.Sprintf("sub-%d", i)
				if l.kind == domain.FactSubscriptionEnd {
					day = seriesYear.first.AddDate(0, 0, min(i%days+30, days-1))
				}
			case domain.FactRecurring, domain.FactOneTime:
				currency, amount = []string{"EUR", "USD"}[i%2], int64(990+i%5000)
			case domain.FactTenantFrozen:
				subject = fmt.Sprintf("tenant-%d", i%1500)
			}
			facts = append(facts, []any{appID, string(l.kind), key, subject, day, currency, amount})
		}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"analytics_daily_facts"}, []string{"app_id", "kind", "key", "subject", "day", "currency", "amount"},
		pgx.CopyFromRows(facts)); err != nil {
		tb.Fatal(err)
	}
	signIns := make([][]any, 0, days*seriesSignInsPerDay)
	for d := range days {
		for i := range seriesSignInsPerDay {
			at := seriesYear.first.AddDate(0, 0, d).Add(time.Duration(i) * 86 * time.Second)
			signIns = append(signIns, []any{uuid.New(), appID, users[(d*seriesSignInsPerDay+i*7)%seriesUsers], at, "192.0.2.1"})
		}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"analytics_sign_ins"}, []string{"id", "app_id", "user_id", "at", "ip"},
		pgx.CopyFromRows(signIns)); err != nil {
		tb.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `vacuum (analyze) analytics_daily_facts, analytics_sign_ins, analytics_daily_sign_ins,
		analytics_daily_active_users, analytics_daily_fact_sums, analytics_daily_frozen_subjects,
		analytics_daily_subscription_spans, analytics_daily_subscription_changes`); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkDailySeries measures the console analytics page's read on PostgreSQL: an app's daily
// series (GetDailySeries' use case and store: the daily roll-ups in one repeatable-read snapshot)
// over a week, a month, a quarter and the year of seriesLoad, beside the same statements run bare
// over pgx and read as raw rows (baseline). Each reports its p50 and p99 in milliseconds (the
// goal: p99 ≤ 100 ms per page).
func BenchmarkDailySeries(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.New(b, "analytics", postgres.Migrate)
	appID := uuid.NewString()
	seedSeriesYear(b, pool, appID)
	svc, err := app.New(app.Config{Store: postgres.New(pool), Clock: func() time.Time { return seriesYear.last.Add(12 * time.Hour) }})
	if err != nil {
		b.Fatal(err)
	}
	for _, days := range domain.SeriesLengths {
		r := domain.Range{From: seriesYear.last.AddDate(0, 0, 1-days), To: seriesYear.last}
		b.Run(fmt.Sprintf("%dd/baseline", days), func(b *testing.B) {
			latency.Measure(b, func() error {
				return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
					for _, q := range []struct {
						sql  string
						args []any
					}{
						{postgres.DailySignInsSQL, []any{appID, r.From, r.To}},
						{postgres.DailyFactsSQL, []any{appID, r.From, r.To}},
						{postgres.ActiveBeforeSQL, []any{appID, r.From}},
						{postgres.ActiveChangesSQL, []any{appID, r.From, r.To}},
					} {
						rows, err := tx.Query(ctx, q.sql, q.args...)
						if err != nil {
							return err
						}
						for rows.Next() {
							rows.RawValues()
						}
						if err := rows.Err(); err != nil {
							return err
						}
					}
					return nil
				})
			})
		})
		b.Run(fmt.Sprintf("%dd/series", days), func(b *testing.B) {
			latency.Measure(b, func() error {
				s, err := svc.DailySeries(ctx, appID, days, "")
				switch {
				case err != nil:
				case len(s.Rows) != days:
					err = fmt.Errorf("a series of %d rows, want %d", len(s.Rows), days)
				case s.Rows[days-1].SignIns != seriesSignInsPerDay:
					err = fmt.Errorf("the last day has %d sign-ins, want %d", s.Rows[days-1].SignIns, seriesSignInsPerDay)
				}
				return err
			})
		})
	}
}
