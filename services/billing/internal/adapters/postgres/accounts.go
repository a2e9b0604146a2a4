package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Account reads a tenant's account, the zero account when none is stored.
func (s *Store) Account(ctx context.Context, appID, tenantID string) (domain.Account, error) {
	return account(ctx, pgxx.Q(ctx, s.pool), appID, tenantID, "")
}

func account(ctx context.Context, q pgxx.Querier, appID, tenantID, lock string) (domain.Account, error) {
	a := domain.Account{AppID: appID, TenantID: tenantID}
	var state []byte
	err := q.QueryRow(ctx, "SELECT revision, state, updated_at FROM accounts WHERE tenant_id = $1 AND app_id = $2"+lock, tenantID, appID).
		Scan(&a.Revision, &state, &a.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, nil
	}
	if err != nil {
		return domain.Account{}, fmt.Errorf("select account: %w", err)
	}
	a.UpdatedAt = a.UpdatedAt.UTC()
	if err := json.Unmarshal(state, &a.State); err != nil {
		return domain.Account{}, fmt.Errorf("account state: %w", err)
	}
	return a, nil
}

// lockAccount creates the tenant's account row if needed and locks it for the transaction, so
// every change of one tenant's billing state runs after the previous one committed.
func lockAccount(ctx context.Context, tx pgx.Tx, appID, tenantID string) (domain.Account, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO accounts (app_id, tenant_id, revision, state, updated_at)
		VALUES ($1, $2, 0, $3, now()) ON CONFLICT (tenant_id) DO NOTHING`, appID, tenantID, domain.State{}); err != nil {
		return domain.Account{}, fmt.Errorf("insert account: %w", err)
	}
	return account(ctx, tx, appID, tenantID, " FOR UPDATE")
}

// withAccount locks the tenant's account (after whatever the caller locked first: the order every
// writer keeps), runs fn on it and stores it with fn's events.
func withAccount(ctx context.Context, tx pgx.Tx, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error) {
	a, err := lockAccount(ctx, tx, appID, tenantID)
	if err != nil {
		return domain.Account{}, err
	}
	evs, err := fn(&a)
	if err != nil {
		return domain.Account{}, err
	}
	if err := saveAccount(ctx, tx, a); err != nil {
		return domain.Account{}, err
	}
	return a, events.InsertOutbox(ctx, tx, evs...)
}

// UpdateAccount changes a tenant's account under its lock.
func (s *Store) UpdateAccount(ctx context.Context, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error) {
	if !isUUID(appID) || !isUUID(tenantID) {
		return domain.Account{}, fmt.Errorf("update account: app %q or tenant %q is no UUID", appID, tenantID)
	}
	var out domain.Account
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = withAccount(ctx, tx, appID, tenantID, fn)
		return err
	})
	return out, err
}

func saveAccount(ctx context.Context, tx pgx.Tx, a domain.Account) error {
	_, err := tx.Exec(ctx, `UPDATE accounts SET revision = $3, state = $4, updated_at = $5 WHERE tenant_id = $1 AND app_id = $2`,
		a.TenantID, a.AppID, a.Revision, a.State, a.UpdatedAt)
	return err
}
