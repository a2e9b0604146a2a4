package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

const checkoutColumns = `id::text, app_id::text, tenant_id::text, connection_id::text, provider, test, mode, price, tax_rate,
	quantity, method, customer_id, hash, state_hash, provider_session_id, provider_url, status, created_at, updated_at, user_id`

func scanCheckout(row pgx.Row) (domain.CheckoutSession, error) {
	var c domain.CheckoutSession
	err := row.Scan(&c.ID, &c.AppID, &c.TenantID, &c.ConnectionID, &c.Provider, &c.Test, &c.Mode, &c.Price, &c.TaxRate,
		&c.Quantity, &c.Method, &c.CustomerID, &c.Hash, &c.StateHash, &c.ProviderSessionID, &c.ProviderURL, &c.Status, &c.CreatedAt, &c.UpdatedAt, &c.UserID)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.CheckoutSession{}, domain.ErrCheckoutNotFound
	}
	if err != nil {
		return domain.CheckoutSession{}, fmt.Errorf("select checkout session: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// CreateCheckout stores a new session.
func (s *Store) CreateCheckout(ctx context.Context, c domain.CheckoutSession) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO checkout_sessions (id, app_id, tenant_id, connection_id, provider, test, mode, price,
		tax_rate, quantity, method, customer_id, hash, state_hash, provider_session_id, provider_url, status, created_at, updated_at, user_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
		c.ID, c.AppID, c.TenantID, c.ConnectionID, c.Provider, c.Test, c.Mode, c.Price, c.TaxRate,
		c.Quantity, c.Method, c.CustomerID, c.Hash, c.StateHash, c.ProviderSessionID, c.ProviderURL, c.Status, c.CreatedAt, c.UpdatedAt, c.UserID)
	if err != nil {
		return fmt.Errorf("insert checkout session: %w", err)
	}
	return nil
}

// Checkout reads a session.
func (s *Store) Checkout(ctx context.Context, id string) (domain.CheckoutSession, error) {
	if !isUUID(id) {
		return domain.CheckoutSession{}, domain.ErrCheckoutNotFound
	}
	return scanCheckout(pgxx.Q(ctx, s.pool).QueryRow(ctx, "SELECT "+checkoutColumns+" FROM checkout_sessions WHERE id = $1", id))
}

// SettleCheckout locks the session, then its tenant's account (the order every writer of both
// takes), runs fn and commits session, account and events together.
func (s *Store) SettleCheckout(ctx context.Context, id string, fn func(*domain.CheckoutSession, *domain.Account) ([]events.Event, error)) (domain.CheckoutSession, domain.Account, error) {
	if !isUUID(id) {
		return domain.CheckoutSession{}, domain.Account{}, domain.ErrCheckoutNotFound
	}
	var (
		cs   domain.CheckoutSession
		acct domain.Account
	)
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if cs, err = scanCheckout(tx.QueryRow(ctx, "SELECT "+checkoutColumns+" FROM checkout_sessions WHERE id = $1 FOR UPDATE", id)); err != nil {
			return err
		}
		acct, err = withAccount(ctx, tx, cs.AppID, cs.TenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&cs, a) })
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE checkout_sessions SET status = $2, updated_at = $3 WHERE id = $1", cs.ID, cs.Status, cs.UpdatedAt); err != nil {
			return fmt.Errorf("update checkout session: %w", err)
		}
		return nil
	})
	if err != nil {
		return domain.CheckoutSession{}, domain.Account{}, err
	}
	return cs, acct, nil
}

// TenantCheckouts lists the tenant's sessions, newest first.
func (s *Store) TenantCheckouts(ctx context.Context, appID, tenantID string, limit int) ([]domain.CheckoutSession, error) {
	if !isUUID(tenantID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT "+checkoutColumns+` FROM checkout_sessions WHERE app_id = $1 AND tenant_id = $2
		ORDER BY created_at DESC, id DESC LIMIT $3`, appID, tenantID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.CheckoutSession, error) { return scanCheckout(r) })
}
