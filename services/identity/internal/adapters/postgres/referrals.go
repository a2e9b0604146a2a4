package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// CreateReferral implements app.Referrals. The inviter's user row is locked while its invites are
// counted, so concurrent invites of one user are serialised and cannot pass the limit together.
func (s *Store) CreateReferral(ctx context.Context, r domain.Referral, since time.Time, limit int) error {
	if !ids(r.AppID, r.InviterID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `select 1 from users where id = $1 and app_id = $2 for update`, r.InviterID, r.AppID).
			Scan(&one); err != nil {
			return noRow(err, "user")
		}
		var n int
		if err := tx.QueryRow(ctx, `select count(*) from referrals where inviter_id = $1 and created_at >= $2`,
			r.InviterID, since).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return domain.ErrInviteLimit
		}
		_, err := tx.Exec(ctx, `insert into referrals (hash, app_id, inviter_id, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
			r.Hash, r.AppID, r.InviterID, r.CreatedAt, r.ExpiresAt)
		return err
	})
}

// GetReferral implements app.Referrals.
func (s *Store) GetReferral(ctx context.Context, hash []byte) (domain.Referral, error) {
	var r domain.Referral
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx,
		`select hash, app_id, inviter_id, created_at, expires_at from referrals where hash = $1`, hash).
		Scan(&r.Hash, &r.AppID, &r.InviterID, &r.CreatedAt, &r.ExpiresAt)
	r.CreatedAt, r.ExpiresAt = utc(r.CreatedAt), utc(r.ExpiresAt)
	return r, noRow(err, "referral")
}

// DeleteReferral implements app.Referrals.
func (s *Store) DeleteReferral(ctx context.Context, hash []byte) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `delete from referrals where hash = $1`, hash)
	return err
}
