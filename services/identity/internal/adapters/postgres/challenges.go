package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const selectChallenges = `select id, app_id, user_id, purpose, email, link_hash, code_hash, code_attempts,
	continue_client_id, continue_redirect_uri, continue_state, continue_nonce, continue_scope,
	created_at, expires_at, used_at, methods, continue_service from challenges `

func scanChallenge(row pgx.Row) (domain.Challenge, error) {
	var c domain.Challenge
	var purpose string
	k := &c.Continue
	err := row.Scan(&c.ID, &c.AppID, &c.UserID, &purpose, &c.Email, &c.LinkHash, &c.CodeHash, &c.CodeAttempts,
		&k.ClientID, &k.RedirectURI, &k.State, &k.Nonce, &k.Scope, &c.CreatedAt, &c.ExpiresAt, &c.UsedAt, &c.Methods, &k.Service)
	if err != nil {
		return domain.Challenge{}, noRow(err, "challenge")
	}
	c.Purpose = domain.ChallengePurpose(purpose)
	if len(c.Methods) == 0 {
		c.Methods = nil // a mail's challenge proves no sign-in method, as NewChallenge leaves it
	}
	c.CreatedAt, c.ExpiresAt = utc(c.CreatedAt), utc(c.ExpiresAt)
	if c.UsedAt != nil {
		at := utc(*c.UsedAt)
		c.UsedAt = &at
	}
	return c, nil
}

// CreateChallenge implements app.Challenges.
func (s *Store) CreateChallenge(ctx context.Context, c domain.Challenge) error {
	if !ids(c.ID, c.AppID, c.UserID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `delete from challenges where expires_at < $1`, c.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update challenges set used_at = $4
			where app_id = $1 and user_id = $2 and purpose = $3 and used_at is null`,
			c.AppID, c.UserID, string(c.Purpose), c.CreatedAt); err != nil {
			return err
		}
		k := c.Continue
		return insertForUser(ctx, tx, `insert into challenges
			(id, app_id, user_id, purpose, email, link_hash, code_hash, code_attempts,
			 continue_client_id, continue_redirect_uri, continue_state, continue_nonce, continue_scope,
			 created_at, expires_at, used_at, methods, continue_service)
			select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18
			where exists (select 1 from users where app_id = $2 and id = $3)`,
			c.ID, c.AppID, c.UserID, string(c.Purpose), c.Email, c.LinkHash, c.CodeHash, c.CodeAttempts,
			k.ClientID, k.RedirectURI, k.State, k.Nonce, k.Scope, c.CreatedAt, c.ExpiresAt, c.UsedAt, nonNil(c.Methods), k.Service)
	})
}

// GetChallengeByLink implements app.Challenges.
func (s *Store) GetChallengeByLink(ctx context.Context, linkHash []byte) (domain.Challenge, error) {
	return scanChallenge(pgxx.Q(ctx, s.pool).QueryRow(ctx, selectChallenges+`where link_hash = $1`, linkHash))
}

// GetChallenge implements app.Challenges.
func (s *Store) GetChallenge(ctx context.Context, appID, id string) (domain.Challenge, error) {
	if !ids(appID, id) {
		return domain.Challenge{}, domain.NotFound("challenge")
	}
	return scanChallenge(pgxx.Q(ctx, s.pool).QueryRow(ctx, selectChallenges+`where app_id = $1 and id = $2`, appID, id))
}

// lockLiveChallenge locks the app's challenge id for the transaction and answers
// domain.ErrChallengeSpent when it is not live at now.
func lockLiveChallenge(ctx context.Context, tx pgx.Tx, appID, id string, now time.Time) (domain.Challenge, error) {
	c, err := scanChallenge(tx.QueryRow(ctx, selectChallenges+`where app_id = $1 and id = $2 for update`, appID, id))
	if err != nil {
		return domain.Challenge{}, err
	}
	if !c.Live(now) {
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	return c, nil
}

// RecordWrongCode implements app.Challenges. The row lock orders concurrent wrong codes, so each
// sees the count of the one before it.
func (s *Store) RecordWrongCode(ctx context.Context, appID, id string, now time.Time) (domain.Challenge, error) {
	if !ids(appID, id) {
		return domain.Challenge{}, domain.NotFound("challenge")
	}
	var out domain.Challenge
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		c, err := lockLiveChallenge(ctx, tx, appID, id, now)
		if err != nil {
			return err
		}
		c.CodeAttempts++
		if _, err := tx.Exec(ctx, `update challenges set code_attempts = $2 where id = $1`, id, c.CodeAttempts); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// MeetChallenge implements app.Challenges: the challenge row is locked first, then its user, the
// order every path that locks both follows.
func (s *Store) MeetChallenge(ctx context.Context, appID, id string, now time.Time, fn func(domain.Challenge, *domain.User) (app.ChallengeEffect, error)) (domain.User, error) {
	if !ids(appID, id) {
		return domain.User{}, domain.NotFound("challenge")
	}
	var out domain.User
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		c, err := lockLiveChallenge(ctx, tx, appID, id, now)
		if err != nil {
			return err
		}
		u, err := scanUser(tx.QueryRow(ctx, selectUsers+`where app_id = $1 and id = $2 for update`, appID, c.UserID))
		if err != nil {
			return err
		}
		effect, err := fn(c, &u)
		if err != nil {
			return err
		}
		u.ID, u.AppID = c.UserID, appID // fn cannot move the user to another row or app
		if _, err := tx.Exec(ctx, updateUser, userFields(&u)...); err != nil {
			return translate(err, "app")
		}
		if _, err := tx.Exec(ctx, `update challenges set used_at = $2 where id = $1`, id, now); err != nil {
			return err
		}
		evs := effect.Events
		if effect.RevokeSessions {
			more, err := revokeUserSessions(ctx, tx, appID, u.ID, now, effect.SessionsRevoked)
			if err != nil {
				return err
			}
			evs = append(slices.Clip(evs), more...)
		}
		out = u
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return domain.User{}, err
	}
	return out, nil
}
