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
		live = []string{}
		rows, err := tx.Query(ctx, `update refresh_families set revoked = true
			where app_id = $1 and user_id = $2 and not revoked and ($3 = '' or id::text = $3)
			returning id::text, expires_at > $4`, appID, userID, sessionID, now)
		if err != nil {
			return err
		}
		var id string
		var alive bool
		if _, err := pgx.ForEachRow(rows, []any{&id, &alive}, func() error {
			if alive {
				live = append(live, id)
			}
			return nil
		}); err != nil {
			return err
		}
		if sessionID != "" && len(live) == 0 {
			return domain.NotFound("session") // rolls back the revocation of an expired family
		}
		if len(live) == 0 {
			return nil
		}
		slices.Sort(live)
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
