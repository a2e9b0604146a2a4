package postgres_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// rollupChecks pair each roll-up table (read in full) with the same answer aggregated from scratch
// from the raw rows, in the same column order and sort.
var rollupChecks = []struct{ name, rolled, raw string }{
	{
		"sign-ins per day",
		`select app_id::text, day, sign_ins, active_users from analytics_daily_sign_ins order by 1, 2`,
		`select app_id::text, (at at time zone 'UTC')::date, count(*), count(distinct user_id) from analytics_sign_ins group by 1, 2 order by 1, 2`,
	},
	{
		"active users per day",
		`select app_id::text, day, user_id::text from analytics_daily_active_users order by 1, 2, 3`,
		`select distinct app_id::text, (at at time zone 'UTC')::date, user_id::text from analytics_sign_ins order by 1, 2, 3`,
	},
	{
		"facts per day, kind and currency",
		`select app_id::text, day, kind, currency, facts, amount from analytics_daily_fact_sums order by 1, 2, 3, 4`,
		`select app_id::text, day, kind, currency, count(distinct case when kind = 'tenant_frozen' then subject else key end), sum(amount)::bigint
			from analytics_daily_facts where kind not in ('subscription_started', 'subscription_ended') group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
	},
	{
		"freezes per day and tenant",
		`select app_id::text, day, subject, facts from analytics_daily_frozen_subjects order by 1, 2, 3`,
		`select app_id::text, day, subject, count(*) from analytics_daily_facts where kind = 'tenant_frozen' group by 1, 2, 3 order by 1, 2, 3`,
	},
	{
		"subscription spans",
		`select app_id::text, key, starts, ends from analytics_daily_subscription_spans order by 1, 2`,
		`select app_id::text, key, min(day) filter (where kind = 'subscription_started'), min(day) filter (where kind = 'subscription_ended')
			from analytics_daily_facts where kind in ('subscription_started', 'subscription_ended') group by 1, 2 order by 1, 2`,
	},
	{
		"subscription changes per day",
		`select app_id::text, day, change from analytics_daily_subscription_changes order by 1, 2`,
		`select app_id::text, day, sum(change)::bigint from (
			select s.app_id, s.day, 1 as change from analytics_daily_facts s
				left join analytics_daily_facts e on e.app_id = s.app_id and e.kind = 'subscription_ended' and e.key = s.key
				where s.kind = 'subscription_started' and (e.day is null or e.day > s.day)
			union all
			select s.app_id, e.day, -1 from analytics_daily_facts s
				join analytics_daily_facts e on e.app_id = s.app_id and e.kind = 'subscription_ended' and e.key = s.key
				where s.kind = 'subscription_started' and e.day > s.day
		) c group by 1, 2 having sum(change) <> 0 order by 1, 2`,
	},
}

// assertRollupsEqualRawAggregation fails naming each roll-up that differs from its from-scratch
// aggregation. Raw rows must exist for each, so an empty database cannot pass.
func assertRollupsEqualRawAggregation(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for _, c := range rollupChecks {
		rolled, raw := tableRows(t, pool, c.rolled), tableRows(t, pool, c.raw)
		if len(raw) == 0 {
			t.Fatalf("%s: no raw rows to compare with", c.name)
		}
		if !reflect.DeepEqual(rolled, raw) {
			t.Errorf("%s: the roll-up holds\n%s\nthe raw rows aggregate to\n%s", c.name, strings.Join(rolled, "\n"), strings.Join(raw, "\n"))
		}
	}
}

func tableRows(t *testing.T, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(v))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// randomWrites records n facts and sign-ins drawn from small pools of apps, keys, tenants, users and
// days on eight goroutines at once, so keys are replayed (on the same, a later or an earlier day),
// tenants are frozen several times a day and users sign in several times a day.
func randomWrites(t *testing.T, s *postgres.Store, seed uint64, n int) {
	t.Helper()
	apps := []string{uuid.NewString(), uuid.NewString()}
	users := make([]string, 6)
	for i := range users {
		users[i] = uuid.NewString()
	}
	signInIDs := make([]string, 40)
	for i := range signInIDs {
		signInIDs[i] = uuid.NewString()
	}
	kinds := []domain.FactKind{domain.FactNewUser, domain.FactNewTenant, domain.FactPaymentFailure, domain.FactTenantFrozen,
		domain.FactRecurring, domain.FactOneTime, domain.FactSubscriptionRun, domain.FactSubscriptionEnd}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		rnd := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for range n / 8 {
				appID, day := apps[rnd.IntN(len(apps))], march(1+rnd.IntN(6))
				if rnd.IntN(3) == 0 {
					// A sign-in id always comes back with the same app, user and instant, as a replayed
					// event does.
					i := rnd.IntN(len(signInIDs))
					at := march(1 + i%6).Add(time.Duration(i*37) * time.Minute)
					errs <- s.RecordSignIn(ctx, domain.SignIn{ID: signInIDs[i], AppID: apps[i%2], UserID: users[i%len(users)], At: at})
					continue
				}
				// A key always comes back with the same subject, currency and amount.
				k := rnd.IntN(30)
				f := domain.Fact{AppID: appID, Kind: kinds[rnd.IntN(len(kinds))], Key: fmt.Sprintf("key-%d", k), Day: day}
				switch f.Kind {
				case domain.FactTenantFrozen:
					f.Subject = fmt.Sprintf("tenant-%d", k%3)
				case domain.FactRecurring, domain.FactOneTime:
					f.Currency, f.Amount = []string{"EUR", "USD"}[k%2], int64(100+k)
				case domain.FactSubscriptionRun, domain.FactSubscriptionEnd:
					// Few subscriptions, so the writers of one's start and end often race; some end
					// later than they start, some by the day they start.
					f.Key = fmt.Sprintf("key-%d", k%4)
					if f.Kind == domain.FactSubscriptionEnd {
						f.Day = day.AddDate(0, 0, k%4)
					}
				}
				errs <- s.RecordFact(ctx, f)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a write failed: %v", err)
		}
	}
}

var ctx = context.Background()

func march(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

func TestTheRollupsEqualAFromScratchAggregationAfterRandomWritesAndReplays(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			pool := pgtest.New(t, "analytics", postgres.Migrate)
			randomWrites(t, postgres.New(pool), seed, 800)
			assertRollupsEqualRawAggregation(t, pool)
		})
	}
}

// migrateBeforeRollups applies the analytics migrations before 0006 only.
func migrateBeforeRollups(ctx context.Context, pool *pgxpool.Pool) error {
	before := fstest.MapFS{}
	err := fs.WalkDir(postgres.MigrationFiles, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() >= "0006" {
			return err
		}
		body, err := fs.ReadFile(postgres.MigrationFiles, path)
		before[d.Name()] = &fstest.MapFile{Data: body}
		return err
	})
	if err != nil {
		return err
	}
	return pgxx.Migrate(ctx, pool, postgres.Component, before)
}

func TestMigration6BackfillsTheRollupsFromTheRowsStoredBeforeIt(t *testing.T) {
	pool := pgtest.New(t, "analytics-before-rollups", migrateBeforeRollups)
	randomWrites(t, postgres.New(pool), 7, 400) // no roll-ups yet: only the raw rows
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	assertRollupsEqualRawAggregation(t, pool)
	// From then on the triggers keep them.
	randomWrites(t, postgres.New(pool), 8, 400)
	assertRollupsEqualRawAggregation(t, pool)
}
