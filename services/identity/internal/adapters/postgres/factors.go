package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const factorColumns = `id, app_id, user_id, kind, sealed_secret, last_step, created_at, confirmed_at`

func scanFactor(row pgx.Row) (domain.Factor, error) {
	var f domain.Factor
	if err := row.Scan(&f.ID, &f.AppID, &f.UserID, &f.Kind, &f.SealedSecret, &f.LastStep, &f.CreatedAt, &f.ConfirmedAt); err != nil {
		return domain.Factor{}, err
	}
	f.CreatedAt = utc(f.CreatedAt)
	if f.ConfirmedAt != nil {
		at := utc(*f.ConfirmedAt)
		f.ConfirmedAt = &at
	}
	return f, nil
}

// listFactors reads the user's factors, oldest first; lock adds "for update".
func listFactors(ctx context.Context, q pgxx.Querier, appID, userID string, lock bool) ([]domain.Factor, error) {
	sql := `select ` + factorColumns + ` from second_factors where app_id = $1 and user_id = $2 order by created_at, id`
	if lock {
		sql += ` for update`
	}
	rows, err := q.Query(ctx, sql, appID, userID)
	if err != nil {
		return nil, fmt.Errorf("list factors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Factor, error) { return scanFactor(row) })
	if err != nil {
		return nil, fmt.Errorf("list factors: %w", err)
	}
	return out, nil
}

// SavePendingFactor implements app.Factors. The user's row is locked, so two enrolments of one
// user run one after the other and see each other's factor.
func (s *Store) SavePendingFactor(ctx context.Context, f domain.Factor) error {
	if !ids(f.ID, f.AppID, f.UserID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select 1 from users where app_id = $1 and id = $2 for update)`, f.AppID, f.UserID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return domain.NotFound("user")
		}
		if f.Kind.Single() {
			var enrolled bool
			if err := tx.QueryRow(ctx, `select exists (select 1 from second_factors
				where user_id = $1 and kind = $2 and confirmed_at is not null)`, f.UserID, string(f.Kind)).Scan(&enrolled); err != nil {
				return err
			}
			if enrolled {
				return domain.ErrFactorEnrolled
			}
		}
		if _, err := tx.Exec(ctx, `delete from second_factors where user_id = $1 and kind = $2 and confirmed_at is null`,
			f.UserID, string(f.Kind)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `insert into second_factors (`+factorColumns+`) values ($1, $2, $3, $4, $5, $6, $7, null)`,
			f.ID, f.AppID, f.UserID, string(f.Kind), f.SealedSecret, f.LastStep, f.CreatedAt)
		return translate(err, "user")
	})
}

// ListFactors implements app.Factors.
func (s *Store) ListFactors(ctx context.Context, appID, userID string) ([]domain.Factor, error) {
	if !ids(appID, userID) {
		return []domain.Factor{}, nil
	}
	return listFactors(ctx, pgxx.Q(ctx, s.pool), appID, userID, false)
}

// ConfirmFactor implements app.Factors.
func (s *Store) ConfirmFactor(ctx context.Context, appID, userID, id string, step int64, now time.Time, codes []domain.RecoveryCode, evs ...events.Event) error {
	if !ids(appID, userID, id) {
		return domain.NotFound("second factor")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `update second_factors set confirmed_at = $4, last_step = $5
			where id = $1 and app_id = $2 and user_id = $3 and confirmed_at is null`, id, appID, userID, now, step)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return domain.NotFound("second factor")
		}
		if codes != nil {
			if err := replaceCodes(ctx, tx, appID, userID, codes); err != nil {
				return err
			}
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// replaceCodes deletes the user's recovery codes and inserts codes.
func replaceCodes(ctx context.Context, tx pgx.Tx, appID, userID string, codes []domain.RecoveryCode) error {
	if _, err := tx.Exec(ctx, `delete from recovery_codes where user_id = $1`, userID); err != nil {
		return err
	}
	for _, c := range codes {
		if _, err := tx.Exec(ctx, `insert into recovery_codes (user_id, app_id, hash, created_at, used_at) values ($1, $2, $3, $4, $5)`,
			userID, appID, c.Hash, c.CreatedAt, c.UsedAt); err != nil {
			return translate(err, "user")
		}
	}
	return nil
}

// UseFactorStep implements app.Factors: one conditional update, so of two concurrent uses of a
// step the second finds last_step moved and matches no row.
func (s *Store) UseFactorStep(ctx context.Context, appID, userID, id string, step int64) error {
	if !ids(appID, userID, id) {
		return domain.NotFound("second factor")
	}
	var used bool
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `with f as (select id from second_factors
			where id = $1 and app_id = $2 and user_id = $3 and confirmed_at is not null for update),
		u as (update second_factors set last_step = $4 where id in (select id from f) and last_step < $4 returning id)
		select exists (select 1 from u) from f`, id, appID, userID, step).Scan(&used)
	if err != nil {
		return noRow(err, "second factor")
	}
	if !used {
		return domain.ErrCodeReplayed
	}
	return nil
}

// ReplaceRecoveryCodes implements app.Factors.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, appID, userID string, codes []domain.RecoveryCode, evs ...events.Event) error {
	if !ids(appID, userID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select 1 from users where app_id = $1 and id = $2 for update)`, appID, userID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return domain.NotFound("user")
		}
		if err := replaceCodes(ctx, tx, appID, userID, codes); err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// UseRecoveryCode implements app.Factors. The update's row lock makes a concurrent use of the same
// code wait and then find it used.
func (s *Store) UseRecoveryCode(ctx context.Context, appID, userID string, hash []byte, now time.Time, fn func(left int) ([]events.Event, error)) error {
	if !ids(appID, userID) {
		return domain.NotFound("recovery code")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `update recovery_codes set used_at = $4
			where user_id = $1 and app_id = $2 and hash = $3 and used_at is null`, userID, appID, hash, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return domain.NotFound("recovery code")
		}
		left, err := countCodes(ctx, tx, appID, userID)
		if err != nil {
			return err
		}
		evs, err := fn(left)
		if err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

func countCodes(ctx context.Context, q pgxx.Querier, appID, userID string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `select count(*) from recovery_codes where user_id = $1 and app_id = $2 and used_at is null`, userID, appID).Scan(&n)
	return n, err
}

// CountRecoveryCodes implements app.Factors.
func (s *Store) CountRecoveryCodes(ctx context.Context, appID, userID string) (int, error) {
	if !ids(appID, userID) {
		return 0, nil
	}
	return countCodes(ctx, pgxx.Q(ctx, s.pool), appID, userID)
}

// RemoveFactors implements app.Factors.
func (s *Store) RemoveFactors(ctx context.Context, appID, userID string, now time.Time, fn func(removed []domain.Factor, revoked []string) ([]events.Event, error)) error {
	if !ids(appID, userID) {
		_, err := fn([]domain.Factor{}, []string{})
		return err
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		removed, err := listFactors(ctx, tx, appID, userID, true)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `delete from second_factors where app_id = $1 and user_id = $2`, appID, userID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `delete from recovery_codes where app_id = $1 and user_id = $2`, appID, userID); err != nil {
			return err
		}
		live, err := revokeFamilies(ctx, tx, appID, userID, "", now)
		if err != nil {
			return err
		}
		evs, err := fn(removed, nonNil(live[userID]))
		if err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}
