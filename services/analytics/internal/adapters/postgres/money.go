package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// subscriptionColumns are domain.Subscription's columns in scanSubscription's order.
const subscriptionColumns = `s.id::text, s.subscription_id, s.tenant_id::text, coalesce(s.user_id::text, ''), s.price_id,
	s.customer_id, s.test, s.paid, s.cancelled, s.until, s.revision, s.ended_revision`

func subscriptionDest(sub *domain.Subscription, until **time.Time) []any {
	return []any{&sub.ID, &sub.SubscriptionID, &sub.TenantID, &sub.UserID, &sub.PriceID,
		&sub.CustomerID, &sub.Test, &sub.Paid, &sub.Cancelled, until, &sub.Revision, &sub.EndedRevision}
}

// ApplySubscription reads the stored subscription under a row lock (creating an empty one first,
// so two concurrent first events serialise on it), applies the change and writes it back with its
// payment, all in one transaction (joining the inbox's).
func (s *Store) ApplySubscription(ctx context.Context, c domain.SubscriptionChange) error {
	st := c.State
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into analytics_subscriptions (app_id, subscription_id, id, tenant_id)
			values ($1, $2, $3, $4) on conflict do nothing`, st.AppID, st.SubscriptionID, st.ID, st.TenantID); err != nil {
			return fmt.Errorf("create subscription %s: %w", st.SubscriptionID, err)
		}
		stored := domain.Subscription{AppID: st.AppID}
		var until *time.Time
		err := tx.QueryRow(ctx, `select `+subscriptionColumns+` from analytics_subscriptions s
			where s.app_id = $1 and s.subscription_id = $2 for update`, st.AppID, st.SubscriptionID).
			Scan(subscriptionDest(&stored, &until)...)
		if err != nil {
			return fmt.Errorf("lock subscription %s: %w", st.SubscriptionID, err)
		}
		if until != nil {
			stored.Until = until.UTC()
		}
		next := stored.Apply(c)
		if _, err := tx.Exec(ctx, `update analytics_subscriptions set user_id = $3, price_id = $4, customer_id = $5,
				test = $6, paid = $7, cancelled = $8, until = $9, revision = $10, ended_revision = $11
			where app_id = $1 and subscription_id = $2`,
			st.AppID, st.SubscriptionID, nullable(next.UserID), next.PriceID, next.CustomerID, next.Test, next.Paid,
			next.Cancelled, nullableTime(next.Until), next.Revision, next.EndedRevision); err != nil {
			return fmt.Errorf("update subscription %s: %w", st.SubscriptionID, err)
		}
		if c.Payment == nil {
			return nil
		}
		if _, err := tx.Exec(ctx, `insert into analytics_subscription_payments (app_id, subscription_id, key, at)
			values ($1, $2, $3, $4) on conflict do nothing`, st.AppID, st.SubscriptionID, c.Payment.Key, c.Payment.At); err != nil {
			return fmt.Errorf("record payment of subscription %s: %w", st.SubscriptionID, err)
		}
		return nil
	})
}

// RecordOneTimePayment inserts the payment; a stored id wins.
func (s *Store) RecordOneTimePayment(ctx context.Context, p domain.OneTimePayment) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_one_time_payments (id, app_id, tenant_id, user_id,
			payment_id, price_id, customer_id, test, units, units_before, at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) on conflict (id) do nothing`,
		p.ID, p.AppID, p.TenantID, nullable(p.UserID), p.PaymentID, p.PriceID, p.CustomerID, p.Test, p.Units, p.UnitsBefore, p.At)
	if err != nil {
		return fmt.Errorf("insert one-time payment %s: %w", p.ID, err)
	}
	return nil
}

// subscriptionsInRange are the subscriptions with a payment in [$2, $3), with the latest such
// payment's time; the count and the list read the same rows.
const subscriptionsInRange = `with hit as (
		select subscription_id, max(at) as last_at from analytics_subscription_payments
		where app_id = $1 and at >= $2 and at < $3 group by subscription_id)
	select %s from hit join analytics_subscriptions s on s.app_id = $1 and s.subscription_id = hit.subscription_id`

var (
	countSubscriptions = fmt.Sprintf(subscriptionsInRange, "count(*)")
	listSubscriptions  = fmt.Sprintf(subscriptionsInRange, subscriptionColumns+", "+payerColumns) +
		payerJoins("s", "s.user_id") + ` order by hit.last_at desc, s.id desc`
)

// VisitSubscriptions visits route 6's records from one snapshot.
func (s *Store) VisitSubscriptions(ctx context.Context, appID string, from, to time.Time, v app.Visitor[app.SubscriptionRecord]) error {
	return visit(ctx, s, countSubscriptions, listSubscriptions, []any{appID, from, to}, v, func(rows pgx.Rows) (app.SubscriptionRecord, error) {
		rec := app.SubscriptionRecord{Subscription: domain.Subscription{AppID: appID}}
		var (
			until *time.Time
			ps    payerScan
		)
		if err := rows.Scan(append(subscriptionDest(&rec.Subscription, &until), ps.dest()...)...); err != nil {
			return rec, fmt.Errorf("scan subscription: %w", err)
		}
		if until != nil {
			rec.Subscription.Until = until.UTC()
		}
		var err error
		rec.Payer, err = ps.payer(appID, rec.Subscription.UserID)
		return rec, err
	})
}

const oneTimeInRange = `from analytics_one_time_payments o where o.app_id = $1 and o.at >= $2 and o.at < $3`

var (
	countOneTime = `select count(*) ` + oneTimeInRange
	listOneTime  = `select o.id::text, o.tenant_id::text, coalesce(o.user_id::text, ''), o.payment_id, o.price_id,
		o.customer_id, o.test, o.units, o.units_before, o.at, ` + payerColumns + `
	from analytics_one_time_payments o` + payerJoins("o", "o.user_id") + `
	where o.app_id = $1 and o.at >= $2 and o.at < $3 order by o.at desc, o.id desc`
)

// VisitOneTimePayments visits route 7's records from one snapshot.
func (s *Store) VisitOneTimePayments(ctx context.Context, appID string, from, to time.Time, v app.Visitor[app.OneTimePaymentRecord]) error {
	return visit(ctx, s, countOneTime, listOneTime, []any{appID, from, to}, v, func(rows pgx.Rows) (app.OneTimePaymentRecord, error) {
		rec := app.OneTimePaymentRecord{Payment: domain.OneTimePayment{AppID: appID}}
		p := &rec.Payment
		var ps payerScan
		if err := rows.Scan(append([]any{&p.ID, &p.TenantID, &p.UserID, &p.PaymentID, &p.PriceID,
			&p.CustomerID, &p.Test, &p.Units, &p.UnitsBefore, &p.At}, ps.dest()...)...); err != nil {
			return rec, fmt.Errorf("scan one-time payment: %w", err)
		}
		p.At = p.At.UTC()
		var err error
		rec.Payer, err = ps.payer(appID, p.UserID)
		return rec, err
	})
}

// tenantsInRange are the tenants with a change day in [$2, $3), with the latest such day.
const tenantsInRange = `with hit as (
		select tenant_id, max(day) as last_day from analytics_tenant_days
		where app_id = $1 and day >= $2::date and day < $3::date group by tenant_id)
	select %s from hit join analytics_tenants t on t.app_id = $1 and t.id = hit.tenant_id`

var (
	countTenants = fmt.Sprintf(tenantsInRange, "count(*)")
	// The users come as parallel arrays, ordered by id, gathered in one pass over the tenant's
	// users: a tenant has few, and one row per tenant keeps the list a single streamed query.
	listTenants = fmt.Sprintf(tenantsInRange, `t.id::text, t.as_of, t.pb, t.data, us.ids, us.as_ofs, us.pbs, us.datas`) + `
	left join lateral (select array_agg(u.id::text order by u.id) as ids, array_agg(u.as_of order by u.id) as as_ofs,
			array_agg(u.pb order by u.id) as pbs, array_agg(u.data order by u.id) as datas
		from analytics_users u where u.app_id = t.app_id and u.tenant_ref = t.id
			and not u.deleted and (u.pb is not null or u.data is not null)) us on true
	order by hit.last_day desc, t.id desc`
)

// VisitTenants visits route 9's records from one snapshot.
func (s *Store) VisitTenants(ctx context.Context, appID string, from, to time.Time, v app.Visitor[app.TenantRecord]) error {
	return visit(ctx, s, countTenants, listTenants, []any{appID, from, to}, v, func(rows pgx.Rows) (app.TenantRecord, error) {
		var (
			rec      app.TenantRecord
			tenant   stored
			userIDs  []string
			userAsOf []time.Time
			userPB   [][]byte
			userJSON [][]byte
		)
		rec.Tenant = app.TenantSnapshot{AppID: appID, Tenant: &tenantv1.Tenant{}}
		if err := rows.Scan(&rec.Tenant.TenantID, &rec.Tenant.AsOf, &tenant.pb, &tenant.json, &userIDs, &userAsOf, &userPB, &userJSON); err != nil {
			return rec, fmt.Errorf("scan tenant: %w", err)
		}
		rec.Tenant.AsOf = rec.Tenant.AsOf.UTC()
		if err := tenant.decode(rec.Tenant.Tenant); err != nil {
			return rec, fmt.Errorf("decode tenant %s: %w", rec.Tenant.TenantID, err)
		}
		if len(userAsOf) != len(userIDs) || len(userPB) != len(userIDs) || len(userJSON) != len(userIDs) {
			return rec, errors.New("tenant users: arrays of different lengths")
		}
		rec.Users = make([]app.UserSnapshot, len(userIDs))
		for i, id := range userIDs {
			u, err := userSnapshot(appID, id, rec.Tenant.TenantID, false, userAsOf[i], stored{userPB[i], userJSON[i]})
			if err != nil {
				return rec, err
			}
			rec.Users[i] = u
		}
		return rec, nil
	})
}

// visit runs the count and the list in one read-only repeatable-read transaction, so the number
// the visitor is told first is the number of rows it then receives, and streams the rows to it as
// they arrive: no list is held in memory.
func visit[T any](ctx context.Context, s *Store, countSQL, listSQL string, args []any, v app.Visitor[T], scan func(pgx.Rows) (T, error)) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin list: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // read-only: nothing to commit
	var n int
	if err := tx.QueryRow(ctx, countSQL, args...).Scan(&n); err != nil {
		return fmt.Errorf("count list: %w", err)
	}
	if err := v.Count(n); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, listSQL, args...)
	if err != nil {
		return fmt.Errorf("select list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return err
		}
		if err := v.Each(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read list: %w", err)
	}
	return nil
}

// nullableTime stores the zero time as NULL.
func nullableTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// Reset truncates the read models in one statement. TRUNCATE waits for the consumers' open
// transactions and holds theirs off until it commits, so no event's effect is half-erased.
func (s *Store) Reset(ctx context.Context) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `truncate analytics_sign_ins, analytics_users, analytics_tenants,
		analytics_tenant_days, analytics_subscriptions, analytics_subscription_payments, analytics_one_time_payments,
		analytics_daily_facts, analytics_daily_sign_ins, analytics_daily_active_users, analytics_daily_fact_sums,
		analytics_daily_frozen_subjects, analytics_daily_subscription_spans, analytics_daily_subscription_changes`)
	if err != nil {
		return fmt.Errorf("truncate read models: %w", err)
	}
	return nil
}
