package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

const settingsColumns = "app_id::text, connection_id, payment_return_url, failed_payments_to_freeze, one_time_payment_valid_days, referral_promotion_id, renewal_line_description"

func (s *Store) settings(ctx context.Context, q pgxx.Querier, appID, lock string) (domain.Settings, error) {
	var st domain.Settings
	err := q.QueryRow(ctx, "SELECT "+settingsColumns+" FROM app_settings WHERE app_id = $1"+lock, appID).Scan(
		&st.AppID, &st.ConnectionID, &st.PaymentReturnURL, &st.FailedPaymentsToFreeze, &st.OneTimePaymentValidDays, &st.ReferralPromotionID, &st.RenewalLineDescription)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.DefaultSettings(appID), nil
	}
	if err != nil {
		return domain.Settings{}, fmt.Errorf("select settings: %w", err)
	}
	return st, nil
}

// Settings reads an app's settings or the defaults.
func (s *Store) Settings(ctx context.Context, appID string) (domain.Settings, error) {
	return s.settings(ctx, pgxx.Q(ctx, s.pool), appID, "")
}

// UpdateSettings creates the settings row if needed, locks it, runs fn and stores the result.
func (s *Store) UpdateSettings(ctx context.Context, appID string, fn func(*domain.Settings) error) (domain.Settings, error) {
	var out domain.Settings
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		d := domain.DefaultSettings(appID)
		if _, err := tx.Exec(ctx, `INSERT INTO app_settings (app_id, failed_payments_to_freeze, one_time_payment_valid_days)
			VALUES ($1, $2, $3) ON CONFLICT (app_id) DO NOTHING`, appID, d.FailedPaymentsToFreeze, d.OneTimePaymentValidDays); err != nil {
			return fmt.Errorf("insert settings: %w", err)
		}
		st, err := s.settings(ctx, tx, appID, " FOR UPDATE")
		if err != nil {
			return err
		}
		if err := fn(&st); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE app_settings SET connection_id = $2, payment_return_url = $3, failed_payments_to_freeze = $4,
			one_time_payment_valid_days = $5, referral_promotion_id = $6, renewal_line_description = $7 WHERE app_id = $1`,
			appID, st.ConnectionID, st.PaymentReturnURL, st.FailedPaymentsToFreeze, st.OneTimePaymentValidDays, st.ReferralPromotionID,
			st.RenewalLineDescription)
		out = st
		return err
	})
	return out, err
}
