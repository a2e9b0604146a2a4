package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// ListSessions implements app.Sessions.
func (s *Store) ListSessions(ctx context.Context, appID, userID string, now time.Time, limit int) ([]domain.RefreshFamily, error) {
	if !ids(appID, userID) || limit <= 0 {
		return []domain.RefreshFamily{}, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `select `+familyColumns+` from refresh_families f
		where f.app_id = $1 and f.user_id = $2 and not f.revoked and f.expires_at > $3
		order by f.last_used_at desc, f.id limit $4`, appID, userID, now, limit)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.RefreshFamily, error) {
		var f domain.RefreshFamily
		err := row.Scan(familyFields(&f)...)
		familyUTC(&f)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// RevokeSessions implements app.Sessions: one transaction revokes the families (update … returning
// reports which were still live) and writes fn's events to the outbox. The families' rows are
// locked by the update, so a concurrent rotation waits for the commit and then finds its family
// revoked.
func (s *Store) RevokeSessions(ctx context.Context, appID, userID, sessionID string, now time.Time, fn func(revoked []string) ([]events.Event, error)) ([]string, error) {
	if !ids(appID, userID) || (sessionID != "" && !ids(sessionID)) {
		if sessionID != "" {
			return nil, domain.NotFound("session")
		}
		return []string{}, nil
	}
	var live []string
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		byUser, err := revokeFamilies(ctx, tx, appID, userID, sessionID, now)
		if err != nil {
			return err
		}
		live = byUser[userID]
		if live == nil {
			live = []string{}
		}
		if sessionID != "" && len(live) == 0 {
			return domain.NotFound("session") // rolls back the revocation of an expired family
		}
		if len(live) == 0 {
			return nil
		}
		evs, err := fn(live)
		if err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return nil, err
	}
	return live, nil
}

// revokeFamilies revokes the app's families that are not revoked yet — only those of userID when
// it is not "", only sessionID when it is not "" — and returns the ids of those that were live at
// now, by user, each list sorted. The update locks the rows, so a concurrent rotation waits for
// the commit and then finds its family revoked.
func revokeFamilies(ctx context.Context, tx pgx.Tx, appID, userID, sessionID string, now time.Time) (map[string][]string, error) {
	q := `update refresh_families set revoked = true where app_id = $1 and not revoked`
	args := []any{appID, now}
	if userID != "" {
		args = append(args, userID)
		q += fmt.Sprintf(` and user_id = $%d`, len(args))
	}
	if sessionID != "" {
		args = append(args, sessionID)
		q += fmt.Sprintf(` and id = $%d`, len(args))
	}
	rows, err := tx.Query(ctx, q+` returning user_id::text, id::text, expires_at > $2`, args...)
	if err != nil {
		return nil, err
	}
	live := map[string][]string{}
	var user, id string
	var alive bool
	if _, err := pgx.ForEachRow(rows, []any{&user, &id, &alive}, func() error {
		if alive {
			live[user] = append(live[user], id)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, ids := range live {
		slices.Sort(ids)
	}
	return live, nil
}

// revokeUserSessions revokes every family of the user in tx and returns the events sessionsRevoked
// makes of those that were live at now: none when none was (or sessionsRevoked is nil).
func revokeUserSessions(ctx context.Context, tx pgx.Tx, appID, userID string, now time.Time, sessionsRevoked func([]string) ([]events.Event, error)) ([]events.Event, error) {
	live, err := revokeFamilies(ctx, tx, appID, userID, "", now)
	if err != nil || len(live[userID]) == 0 || sessionsRevoked == nil {
		return nil, err
	}
	return sessionsRevoked(live[userID])
}

// UpdateUserEndingSessions implements app.Sessions: the user row is locked, changed, its families
// revoked and every event written in one transaction.
func (s *Store) UpdateUserEndingSessions(ctx context.Context, appID, userID string, now time.Time, fn func(*domain.User) ([]events.Event, error), sessionsRevoked func([]string) ([]events.Event, error)) (domain.User, error) {
	if !ids(appID, userID) {
		return domain.User{}, domain.NotFound("user")
	}
	var out domain.User
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		u, evs, err := updateUserTx(ctx, tx, appID, userID, fn)
		if err != nil {
			return err
		}
		more, err := revokeUserSessions(ctx, tx, appID, userID, now, sessionsRevoked)
		if err != nil {
			return err
		}
		out = u
		return events.InsertOutbox(ctx, tx, append(slices.Clip(evs), more...)...)
	})
	if err != nil {
		return domain.User{}, err
	}
	return out, nil
}
