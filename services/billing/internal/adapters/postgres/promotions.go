package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

const promotionColumns = `id::text, app_id::text, code, name, description, free_units, free_days, valid_from, valid_until,
	max_redemptions, redemptions, active, created_at`

func scanPromotion(row pgx.Row) (domain.Promotion, error) {
	var p domain.Promotion
	var from, until *time.Time
	if err := row.Scan(&p.ID, &p.AppID, &p.Code, &p.Name, &p.Description, &p.FreeUnits, &p.FreeDays, &from, &until,
		&p.MaxRedemptions, &p.Redemptions, &p.Active, &p.CreatedAt); err != nil {
		return domain.Promotion{}, err
	}
	if from != nil {
		p.ValidFrom = from.UTC()
	}
	if until != nil {
		p.ValidUntil = until.UTC()
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// CreatePromotion inserts p; the app's code is unique.
func (s *Store) CreatePromotion(ctx context.Context, p domain.Promotion) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO promotions (id, app_id, code, name, description, free_units, free_days, valid_from,
		valid_until, max_redemptions, redemptions, active, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		p.ID, p.AppID, p.Code, p.Name, p.Description, p.FreeUnits, p.FreeDays, nullTime(p.ValidFrom), nullTime(p.ValidUntil),
		p.MaxRedemptions, p.Redemptions, p.Active, p.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return domain.ErrCodeTaken
	}
	return err
}

// Promotions lists an app's promotions, oldest first.
func (s *Store) Promotions(ctx context.Context, appID string) ([]domain.Promotion, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+promotionColumns+" FROM promotions WHERE app_id = $1 ORDER BY created_at, id", appID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Promotion, error) { return scanPromotion(r) })
}

func savePromotion(ctx context.Context, tx pgx.Tx, p domain.Promotion) error {
	_, err := tx.Exec(ctx, `UPDATE promotions SET redemptions = $2, active = $3, max_redemptions = $4, valid_from = $5, valid_until = $6
		WHERE id = $1`, p.ID, p.Redemptions, p.Active, p.MaxRedemptions, nullTime(p.ValidFrom), nullTime(p.ValidUntil))
	return err
}

// UpdatePromotion locks the app's promotion, runs fn and stores the counters, the switch and the
// limits (what a promotion grants never changes).
func (s *Store) UpdatePromotion(ctx context.Context, appID, id string, fn func(*domain.Promotion) error) (domain.Promotion, error) {
	var out domain.Promotion
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if !isUUID(id) {
			return domain.ErrPromotionNotFound
		}
		p, err := lockPromotion(ctx, tx, appID, "id", id)
		if err != nil {
			return err
		}
		if err := fn(&p); err != nil {
			return err
		}
		out = p
		return savePromotion(ctx, tx, p)
	})
	return out, err
}

// Redeem locks the promotion (serialising its redemptions), records the tenant's redemption
// unless it has one, and commits promotion, account, redemption and events together.
func (s *Store) Redeem(ctx context.Context, r app.Redemption, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	a, err := s.applyPromotion(ctx, r.AppID, "code", r.Code, r.TenantID, fn,
		`INSERT INTO redemptions (promotion_id, free_units, free_days, tenant_id, user_id, redeemed_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		r.TenantID, r.UserID, r.At)
	if errors.Is(err, domain.ErrPromotionNotFound) || errors.Is(err, errClaimed) {
		return domain.Account{}, domain.ErrUnknownCode
	}
	return a, err
}

// GrantReferralReward locks the promotion, records the referred tenant's reward unless it has
// one, and commits promotion, the referrer's account, the reward and events together.
func (s *Store) GrantReferralReward(ctx context.Context, g app.ReferralGrant, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	if !isUUID(g.PromotionID) {
		return domain.Account{}, domain.ErrPromotionNotFound
	}
	a, err := s.applyPromotion(ctx, g.AppID, "id", g.PromotionID, g.ReferrerTenantID, fn,
		`INSERT INTO referral_rewards (promotion_id, free_units, free_days, referred_tenant_id, app_id, referrer_tenant_id,
		referrer_user_id, granted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		g.ReferredTenantID, g.AppID, g.ReferrerTenantID, g.ReferrerUserID, g.At)
	if errors.Is(err, errClaimed) {
		return domain.Account{}, domain.ErrReferralRewarded
	}
	return a, err
}

// errClaimed says the once-only record of a promotion's use exists already.
var errClaimed = errors.New("claimed before")

// applyPromotion locks the app's promotion whose column ("id" or "code") is value, inserts the
// once-only record of this use (claim, given the promotion's id, free units and free days as $1
// to $3 before args, so the record keeps what the use granted; errClaimed
// when it exists), then locks the tenant's account, runs fn on both and stores both with fn's
// events: the effect and the record that it happened commit together. Taking the promotion's
// lock first serialises its uses, so its maximum of redemptions holds.
func (s *Store) applyPromotion(ctx context.Context, appID, column, value, tenantID string,
	fn func(*domain.Promotion, *domain.Account) ([]events.Event, error), claim string, args ...any) (domain.Account, error) {
	var out domain.Account
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		p, err := lockPromotion(ctx, tx, appID, column, value)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, claim, append([]any{p.ID, p.FreeUnits, p.FreeDays}, args...)...)
		if err != nil {
			return fmt.Errorf("record the promotion's use: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return errClaimed
		}
		out, err = withAccount(ctx, tx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&p, a) })
		if err != nil {
			return err
		}
		return savePromotion(ctx, tx, p)
	})
	return out, err
}

// lockPromotion reads the app's promotion whose column ("id" or "code") is value, locked for the
// transaction; domain.ErrPromotionNotFound when absent.
func lockPromotion(ctx context.Context, tx pgx.Tx, appID, column, value string) (domain.Promotion, error) {
	p, err := scanPromotion(tx.QueryRow(ctx, "SELECT "+promotionColumns+" FROM promotions WHERE app_id = $1 AND "+column+" = $2 FOR UPDATE", appID, value))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Promotion{}, domain.ErrPromotionNotFound
	}
	return p, err
}

// usesQuery is every use of a promotion with what it granted, as (kind, key) rows that order
// newest first: kind 0 is a redemption keyed by its tenant, 1 a referral reward keyed by the
// referred tenant. $1 is the app; filter narrows both halves (r: redemptions, g: rewards).
func usesQuery(redemptionFilter, rewardFilter, rest string) string {
	return `SELECT kind, promotion_id::text, code, tenant_id::text, user_id::text, referred::text, free_units, free_days, at FROM (
		SELECT 0 AS kind, r.promotion_id, p.code, r.tenant_id, r.user_id, NULL::uuid AS referred, r.tenant_id AS key,
			r.free_units, r.free_days, r.redeemed_at AS at
		FROM redemptions r JOIN promotions p ON p.id = r.promotion_id AND p.app_id = $1 WHERE ` + redemptionFilter + `
		UNION ALL
		SELECT 1, g.promotion_id, p.code, g.referrer_tenant_id, g.referrer_user_id, g.referred_tenant_id, g.referred_tenant_id,
			g.free_units, g.free_days, g.granted_at
		FROM referral_rewards g JOIN promotions p ON p.id = g.promotion_id AND p.app_id = $1 WHERE ` + rewardFilter + `
	) u ` + rest
}

func collectUses(rows pgx.Rows, err error) ([]domain.PromotionUse, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.PromotionUse, error) {
		var u domain.PromotionUse
		var referred *string
		err := r.Scan(&u.Kind, &u.PromotionID, &u.Code, &u.TenantID, &u.UserID, &referred, &u.FreeUnits, &u.FreeDays, &u.At)
		if referred != nil {
			u.ReferredTenantID = *referred
		}
		u.At = u.At.UTC()
		return u, err
	})
}

// PromotionUses pages through a promotion's uses by the keyset (at, kind, key), newest first.
func (s *Store) PromotionUses(ctx context.Context, appID, promotionID string, after *domain.UseCursor, limit int) ([]domain.PromotionUse, error) {
	if !isUUID(promotionID) {
		return nil, nil
	}
	rest, args := `ORDER BY at DESC, kind DESC, key DESC LIMIT $3`, []any{appID, promotionID, limit}
	if after != nil {
		rest = `WHERE (at, kind, key) < ($4, $5, $6::uuid) ` + rest
		args = append(args, after.At, int(after.Kind), after.Key)
	}
	return collectUses(s.pool.Query(ctx, usesQuery("r.promotion_id = $2", "g.promotion_id = $2", rest), args...))
}

// TenantPromotionUses lists the tenant's redemptions and the rewards granted to it, newest first.
func (s *Store) TenantPromotionUses(ctx context.Context, appID, tenantID string, limit int) ([]domain.PromotionUse, error) {
	if !isUUID(tenantID) {
		return nil, nil
	}
	return collectUses(s.pool.Query(ctx, usesQuery("r.tenant_id = $2", "g.referrer_tenant_id = $2",
		`ORDER BY at DESC, kind DESC, key DESC LIMIT $3`), appID, tenantID, limit))
}
