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
	_, err := tx.Exec(ctx, `UPDATE promotions SET redemptions = $2, active = $3 WHERE id = $1`, p.ID, p.Redemptions, p.Active)
	return err
}

// UpdatePromotion locks the app's promotion, runs fn and stores the counters and the switch.
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
		`INSERT INTO redemptions (promotion_id, tenant_id, user_id, redeemed_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
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
		`INSERT INTO referral_rewards (promotion_id, referred_tenant_id, app_id, referrer_tenant_id, referrer_user_id, granted_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		g.ReferredTenantID, g.AppID, g.ReferrerTenantID, g.ReferrerUserID, g.At)
	if errors.Is(err, errClaimed) {
		return domain.Account{}, domain.ErrReferralRewarded
	}
	return a, err
}

// errClaimed says the once-only record of a promotion's use exists already.
var errClaimed = errors.New("claimed before")

// applyPromotion locks the app's promotion whose column ("id" or "code") is value, inserts the
// once-only record of this use (claim, given the promotion's id as $1 before args; errClaimed
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
		tag, err := tx.Exec(ctx, claim, append([]any{p.ID}, args...)...)
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
