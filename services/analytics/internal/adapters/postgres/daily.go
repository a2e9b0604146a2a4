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

// subscriptionSpans are the subscriptions that started by the range's last day and had not ended
// before its first, with their end day (null while they run).
const subscriptionSpans = `select s.day, e.day from analytics_daily_facts s
	left join analytics_daily_facts e on e.app_id = s.app_id and e.kind = 'subscription_ended' and e.key = s.key
	where s.app_id = $1 and s.kind = 'subscription_started' and s.day <= $3 and (e.day is null or e.day > $2)`

// DailySeries reads the two roll-ups and the subscription spans in one repeatable-read transaction, so they describe the
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
			start          time.Time
			end            *time.Time
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
		rows, err = tx.Query(ctx, subscriptionSpans, appID, r.From, r.To)
		if err != nil {
			return fmt.Errorf("read subscription spans: %w", err)
		}
		var spans []domain.Span
		_, err = pgx.ForEachRow(rows, []any{&start, &end}, func() error {
			sp := domain.Span{Start: start}
			if end != nil {
				sp.End = *end
			}
			spans = append(spans, sp)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read subscription spans: %w", err)
		}
		series.CountActive(spans)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return series, nil
}
