package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// insertForUser runs an "insert … select … where the user exists" statement and reports a missing
// user as not found (the tables reference users by id only, so the app is checked here).
func insertForUser(ctx context.Context, q pgxx.Querier, sql string, args ...any) error {
	tag, err := q.Exec(ctx, sql, args...)
	if err != nil {
		return translate(err, "user")
	}
	if tag.RowsAffected() == 0 {
		return domain.NotFound("user")
	}
	return nil
}

// CreateAuthCode implements app.AuthCodes.
func (s *Store) CreateAuthCode(ctx context.Context, c domain.AuthCode) error {
	if !ids(c.AppID, c.UserID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `delete from auth_codes where expires_at < $1`, c.CreatedAt); err != nil {
			return err
		}
		return insertForUser(ctx, tx, `insert into auth_codes
			(hash, app_id, user_id, redirect_uri, nonce, scope, auth_time, created_at, expires_at, client_ip, user_agent, amr)
			select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 where exists (select 1 from users where app_id = $2 and id = $3)`,
			c.Hash, c.AppID, c.UserID, c.RedirectURI, c.Nonce, c.Scope, c.AuthTime, c.CreatedAt, c.ExpiresAt, c.ClientIP, c.UserAgent, nonNil(c.AMR))
	})
}

// ConsumeAuthCode implements app.AuthCodes: one delete … returning, so two concurrent consumers
// cannot both get the row.
func (s *Store) ConsumeAuthCode(ctx context.Context, hash []byte) (domain.AuthCode, error) {
	var c domain.AuthCode
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `delete from auth_codes where hash = $1
		returning hash, app_id, user_id, redirect_uri, nonce, scope, auth_time, created_at, expires_at, client_ip, user_agent, amr`, hash).
		Scan(&c.Hash, &c.AppID, &c.UserID, &c.RedirectURI, &c.Nonce, &c.Scope, &c.AuthTime, &c.CreatedAt, &c.ExpiresAt, &c.ClientIP, &c.UserAgent, &c.AMR)
	if err != nil {
		return domain.AuthCode{}, noRow(err, "authorization code")
	}
	c.AuthTime, c.CreatedAt, c.ExpiresAt = utc(c.AuthTime), utc(c.CreatedAt), utc(c.ExpiresAt)
	return c, nil
}

// CreateRefreshFamily implements app.RefreshTokens.
func (s *Store) CreateRefreshFamily(ctx context.Context, f domain.RefreshFamily, first domain.RefreshToken) error {
	if !ids(f.ID, f.AppID, f.UserID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if err := insertForUser(ctx, tx, `insert into refresh_families
			(id, app_id, user_id, redirect_uri, scope, auth_time, created_at, revoked, last_used_at, expires_at, client_ip, user_agent, amr)
			select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 where exists (select 1 from users where app_id = $2 and id = $3)`,
			f.ID, f.AppID, f.UserID, f.RedirectURI, f.Scope, f.AuthTime, f.CreatedAt, f.Revoked,
			f.LastUsedAt, f.ExpiresAt, f.ClientIP, f.UserAgent, nonNil(f.AMR)); err != nil {
			return err
		}
		return insertToken(ctx, tx, f.ID, first)
	})
}

func insertToken(ctx context.Context, q pgxx.Querier, familyID string, t domain.RefreshToken) error {
	_, err := q.Exec(ctx, `insert into refresh_tokens (hash, family_id, created_at, expires_at, used_at)
		values ($1, $2, $3, $4, $5)`, t.Hash, familyID, t.CreatedAt, t.ExpiresAt, t.UsedAt)
	return err
}

const familyColumns = `f.id, f.app_id, f.user_id, f.redirect_uri, f.scope, f.auth_time, f.created_at, f.revoked,
	f.last_used_at, f.expires_at, f.client_ip, f.user_agent, f.amr`

// familyFields are the scan targets of familyColumns.
func familyFields(f *domain.RefreshFamily) []any {
	return []any{&f.ID, &f.AppID, &f.UserID, &f.RedirectURI, &f.Scope, &f.AuthTime, &f.CreatedAt, &f.Revoked,
		&f.LastUsedAt, &f.ExpiresAt, &f.ClientIP, &f.UserAgent, &f.AMR}
}

// familyUTC puts a scanned family's times in UTC, as they were written.
func familyUTC(f *domain.RefreshFamily) {
	f.AuthTime, f.CreatedAt, f.LastUsedAt, f.ExpiresAt = utc(f.AuthTime), utc(f.CreatedAt), utc(f.LastUsedAt), utc(f.ExpiresAt)
}

// GetRefreshToken implements app.RefreshTokens.
func (s *Store) GetRefreshToken(ctx context.Context, hash []byte) (domain.RefreshToken, domain.RefreshFamily, error) {
	var (
		t domain.RefreshToken
		f domain.RefreshFamily
	)
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `select t.hash, t.family_id, t.created_at, t.expires_at, t.used_at, `+familyColumns+`
		from refresh_tokens t join refresh_families f on f.id = t.family_id where t.hash = $1`, hash).
		Scan(append([]any{&t.Hash, &t.FamilyID, &t.CreatedAt, &t.ExpiresAt, &t.UsedAt}, familyFields(&f)...)...)
	if err != nil {
		return domain.RefreshToken{}, domain.RefreshFamily{}, noRow(err, "refresh token")
	}
	t.CreatedAt, t.ExpiresAt = utc(t.CreatedAt), utc(t.ExpiresAt)
	if t.UsedAt != nil {
		at := utc(*t.UsedAt)
		t.UsedAt = &at
	}
	familyUTC(&f)
	return t, f, nil
}

// RotateRefreshToken implements app.RefreshTokens. The family row is locked first: a concurrent
// rotation of the same token waits, then finds it used; a concurrent revocation waits or is waited
// for, and cannot miss the new token. A spent token rolls the transaction back.
func (s *Store) RotateRefreshToken(ctx context.Context, hash []byte, next domain.RefreshToken) error {
	var familyID string
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `select family_id from refresh_tokens where hash = $1`, hash).Scan(&familyID); err != nil {
			return noRow(err, "refresh token")
		}
		var revoked bool
		if err := tx.QueryRow(ctx, `select revoked from refresh_families where id = $1 for update`, familyID).Scan(&revoked); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `update refresh_tokens set used_at = $2 where hash = $1 and used_at is null`, hash, next.CreatedAt)
		if err != nil {
			return err
		}
		if revoked || tag.RowsAffected() == 0 {
			return domain.ErrTokenSpent
		}
		if _, err := tx.Exec(ctx, `delete from refresh_tokens where family_id = $1 and expires_at < $2`, familyID, next.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update refresh_families set last_used_at = $2, expires_at = $3 where id = $1`,
			familyID, next.CreatedAt, next.ExpiresAt); err != nil {
			return err
		}
		return insertToken(ctx, tx, familyID, next)
	})
}

// RotateAppKey implements app.RefreshTokens: the app row is locked, changed, its families revoked
// and every event written in one transaction.
func (s *Store) RotateAppKey(ctx context.Context, appID string, now time.Time, fn func(*domain.App) ([]events.Event, error), sessionsRevoked func(string, []string) ([]events.Event, error)) (domain.App, error) {
	if !ids(appID) {
		return domain.App{}, domain.NotFound("app")
	}
	var out domain.App
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		a, evs, err := updateApp(ctx, tx, appID, fn)
		if err != nil {
			return err
		}
		live, err := revokeFamilies(ctx, tx, appID, "", "", now)
		if err != nil {
			return err
		}
		for _, userID := range slices.Sorted(maps.Keys(live)) {
			more, err := sessionsRevoked(userID, live[userID])
			if err != nil {
				return err
			}
			evs = append(slices.Clip(evs), more...)
		}
		out = a
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return domain.App{}, err
	}
	return out, nil
}

// attemptKey is the stored form of a limit key: its SHA-256, so the table holds no email or
// address in clear text.
func attemptKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// attemptLock is the transaction-level advisory lock of a stored key. Two keys may share a lock
// (64 of 256 bits); that only serialises their reservations, it never mixes their counts.
func attemptLock(k []byte) int64 { return int64(binary.BigEndian.Uint64(k)) }

// ReserveAttempt implements app.Attempts. One transaction takes the advisory lock of every key (in
// ascending order, so two reservations over overlapping keys cannot deadlock), then prunes, counts
// and inserts: a concurrent reservation of any of the keys waits for the commit and counts this one.
func (s *Store) ReserveAttempt(ctx context.Context, id string, at time.Time, limits ...app.AttemptLimit) (int, error) {
	if !ids(id) {
		return 0, fmt.Errorf("attempt id %q is not a UUID", id)
	}
	reached := -1
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		reached = -1
		locks := make([]int64, 0, len(limits))
		for _, l := range limits {
			locks = append(locks, attemptLock(attemptKey(l.Key)))
		}
		slices.Sort(locks)
		for _, l := range slices.Compact(locks) {
			if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock($1)`, l); err != nil {
				return err
			}
		}
		for i, l := range limits {
			k := attemptKey(l.Key)
			if _, err := tx.Exec(ctx, `delete from attempts where key = $1 and at < $2`, k, l.Since); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `select count(*) from attempts where key = $1`, k).Scan(&n); err != nil {
				return err
			}
			if n >= l.Max && reached < 0 {
				reached = i
			}
		}
		if reached >= 0 {
			return nil // the pruning is kept; nothing is recorded
		}
		for _, l := range limits {
			if l.CheckOnly {
				continue
			}
			if _, err := tx.Exec(ctx,
				`insert into attempts (key, id, at) select $1, $2, $3
				 where not exists (select 1 from attempts where key = $1 and id = $2)`,
				attemptKey(l.Key), id, at); err != nil {
				return err
			}
		}
		return nil
	})
	return reached, err
}

// ReleaseAttempt implements app.Attempts.
func (s *Store) ReleaseAttempt(ctx context.Context, id string) error {
	if !ids(id) {
		return nil
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `delete from attempts where id = $1`, id)
	return err
}

// ClearAttempts implements app.Attempts.
func (s *Store) ClearAttempts(ctx context.Context, key string) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `delete from attempts where key = $1`, attemptKey(key))
	return err
}
