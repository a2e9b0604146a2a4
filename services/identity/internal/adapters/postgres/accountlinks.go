package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// DeleteProviderLink implements app.ProviderLinks. The user's row is locked first, as
// RemoveFactor locks it, so an unlink and a factor removal of one user run one after the other
// and each sees what the other left.
func (s *Store) DeleteProviderLink(ctx context.Context, appID, userID, slot string, fn func(*domain.User, domain.ProviderLink, []domain.ProviderLink, []domain.Factor) ([]events.Event, error)) error {
	if !ids(appID, userID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		u, evs, err := updateUserTx(ctx, tx, appID, userID, func(u *domain.User) ([]events.Event, error) {
			links, err := listLinks(ctx, tx, appID, userID)
			if err != nil {
				return nil, err
			}
			i := slices.IndexFunc(links, func(l domain.ProviderLink) bool { return l.Slot == slot })
			if i < 0 {
				return nil, domain.NotFound("provider link")
			}
			factors, err := listFactors(ctx, tx, appID, userID, false)
			if err != nil {
				return nil, err
			}
			removed := links[i]
			return fn(u, removed, slices.Delete(links, i, i+1), factors)
		})
		if err != nil {
			return noRow(err, "user")
		}
		if _, err := tx.Exec(ctx, `delete from provider_links where app_id = $1 and user_id = $2 and slot = $3`, appID, u.ID, slot); err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// RemoveFactor implements app.Factors.
func (s *Store) RemoveFactor(ctx context.Context, appID, userID, id string, fn func(domain.User, domain.Factor, []domain.Factor, []domain.ProviderLink) ([]events.Event, error)) error {
	if !ids(appID, userID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		u, err := scanUser(tx.QueryRow(ctx, selectUsers+`where app_id = $1 and id = $2 for update`, appID, userID))
		if err != nil {
			return noRow(err, "user")
		}
		factors, err := listFactors(ctx, tx, appID, userID, true)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(factors, func(f domain.Factor) bool { return f.ID == id && f.Confirmed() })
		if i < 0 {
			return domain.NotFound("second factor")
		}
		removed := factors[i]
		left := slices.Delete(factors, i, i+1)
		links, err := listLinks(ctx, tx, appID, userID)
		if err != nil {
			return err
		}
		evs, err := fn(u, removed, left, links)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `delete from second_factors where id = $1 and user_id = $2`, id, userID); err != nil {
			return err
		}
		if !slices.ContainsFunc(left, domain.Factor.Confirmed) {
			if _, err := tx.Exec(ctx, `delete from recovery_codes where app_id = $1 and user_id = $2`, appID, userID); err != nil {
				return err
			}
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}
