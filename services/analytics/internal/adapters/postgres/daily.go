package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// RecordFact inserts the fact; a stored one keeps its fields and the earlier day.
func (s *Store) RecordFact(ctx context.Context, f domain.Fact) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_daily_facts (app_id, kind, key, subject, day, currency, amount)
		values ($1, $2, $3, $4, $5, $6, $7)
		on conflict (app_id, kind, key) do update set day = least(analytics_daily_facts.day, excluded.day)
		where excluded.day < analytics_daily_facts.day`,
		f.AppID, string(f.Kind), f.Key, f.Subject, f.Day, f.Currency, f.Amount)
	if err != nil {
		return fmt.Errorf("record %s fact %s: %w", f.Kind, f.Key, err)
	}
	return nil
}

// dailySignIns reads the sign-ins and distinct users of each UTC day of [$2, $3] from their
// roll-up (migration 0006), one row a day.
const dailySignIns = `select day, sign_ins, active_users
	from analytics_daily_sign_ins where app_id = $1 and day >= $2 and day <= $3`

// dailyFacts reads the counted facts per day, kind and currency over [$2, $3] from their roll-up,
// where a frozen tenant already counts once per day.
const dailyFacts = `select day, kind, currency, facts, amount
	from analytics_daily_fact_sums where app_id = $1 and day >= $2 and day <= $3`

// activeBefore is the number of subscriptions active on the day before $2: the sum of the app's
// subscription changes up to it, one roll-up row per day of its history.
const activeBefore = `select coalesce(sum(change), 0)::bigint
	from analytics_daily_subscription_changes where app_id = $1 and day < $2`

// activeChanges are the subscription changes of the days of [$2, $3].
const activeChanges = `select day, change
	from analytics_daily_subscription_changes where app_id = $1 and day >= $2 and day <= $3`

// DailySeries reads the roll-ups in one repeatable-read transaction, so they describe the
// same moment.
func (s *Store) DailySeries(ctx context.Context, appID string, r domain.Range) (*domain.Series, error) {
	series := domain.NewSeries(appID, r)
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, dailySignIns, appID, r.From, r.To)
		if err != nil {
			return fmt.Errorf("count sign-ins: %w", err)
		}
		var (
			day            time.Time
			signIns, users int64
			kind, currency string
			count, amount  int64
		)
		_, err = pgx.ForEachRow(rows, []any{&day, &signIns, &users}, func() error {
			if row := series.Row(day); row != nil {
				row.SignIns, row.ActiveUsers = signIns, users
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("count sign-ins: %w", err)
		}
		rows, err = tx.Query(ctx, dailyFacts, appID, r.From, r.To)
		if err != nil {
			return fmt.Errorf("sum facts: %w", err)
		}
		_, err = pgx.ForEachRow(rows, []any{&day, &kind, &currency, &count, &amount}, func() error {
			if row := series.Row(day); row != nil {
				row.Add(domain.FactKind(kind), currency, count, amount)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("sum facts: %w", err)
		}
		var before int64
		if err := tx.QueryRow(ctx, activeBefore, appID, r.From).Scan(&before); err != nil {
			return fmt.Errorf("count active subscriptions: %w", err)
		}
		rows, err = tx.Query(ctx, activeChanges, appID, r.From, r.To)
		if err != nil {
			return fmt.Errorf("read subscription changes: %w", err)
		}
		changes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[domain.ActiveChange])
		if err != nil {
			return fmt.Errorf("read subscription changes: %w", err)
		}
		series.CountActiveChanges(before, changes)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return series, nil
}
