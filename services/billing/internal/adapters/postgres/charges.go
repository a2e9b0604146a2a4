package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

const chargeColumns = `id::text, app_id::text, tenant_id::text, connection_id::text, test, kind, customer_id, price, tax_rate,
	quantity, from_price, from_quantity, amount, subscription_id, invoice_id, status, created_at, updated_at, user_id`

func scanCharge(row pgx.Row) (domain.Charge, error) {
	var c domain.Charge
	err := row.Scan(&c.ID, &c.AppID, &c.TenantID, &c.ConnectionID, &c.Test, &c.Kind, &c.CustomerID, &c.Price, &c.TaxRate,
		&c.Quantity, &c.FromPrice, &c.FromQuantity, &c.Amount, &c.SubscriptionID, &c.InvoiceID, &c.Status, &c.CreatedAt, &c.UpdatedAt, &c.UserID)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Charge{}, domain.ErrChargeNotFound
	}
	if err != nil {
		return domain.Charge{}, fmt.Errorf("select charge: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// CreateCharge inserts c; partial unique indexes refuse a second open upgrade of one subscription
// and a second open subscription charge of one tenant.
func (s *Store) CreateCharge(ctx context.Context, c domain.Charge) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO charges (id, app_id, tenant_id, connection_id, test, kind, customer_id, price, tax_rate,
		quantity, from_price, from_quantity, amount, subscription_id, invoice_id, status, created_at, updated_at, user_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		c.ID, c.AppID, c.TenantID, c.ConnectionID, c.Test, c.Kind, c.CustomerID, c.Price, c.TaxRate,
		c.Quantity, c.FromPrice, c.FromQuantity, c.Amount, c.SubscriptionID, c.InvoiceID, c.Status, c.CreatedAt, c.UpdatedAt, c.UserID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		switch pgErr.ConstraintName {
		case "charges_open_upgrade":
			return domain.ErrChargePending
		case "charges_open_subscription":
			return domain.ErrSubscriptionPending
		}
	}
	if err != nil {
		return fmt.Errorf("insert charge: %w", err)
	}
	return nil
}

// Charge reads a charge.
func (s *Store) Charge(ctx context.Context, id string) (domain.Charge, error) {
	if !isUUID(id) {
		return domain.Charge{}, domain.ErrChargeNotFound
	}
	return scanCharge(pgxx.Q(ctx, s.pool).QueryRow(ctx, "SELECT "+chargeColumns+" FROM charges WHERE id = $1", id))
}

// OpenUpgrade reads the subscription's open upgrade.
func (s *Store) OpenUpgrade(ctx context.Context, subscriptionID string) (domain.Charge, error) {
	return scanCharge(pgxx.Q(ctx, s.pool).QueryRow(ctx, "SELECT "+chargeColumns+
		" FROM charges WHERE subscription_id = $1 AND kind = 'upgrade' AND status = 'open'", subscriptionID))
}

// SettleCharge locks the charge, then its tenant's account, runs fn and commits charge, account
// and events together.
func (s *Store) SettleCharge(ctx context.Context, id string, fn func(*domain.Charge, *domain.Account) ([]events.Event, error)) (domain.Charge, domain.Account, error) {
	if !isUUID(id) {
		return domain.Charge{}, domain.Account{}, domain.ErrChargeNotFound
	}
	var (
		c    domain.Charge
		acct domain.Account
	)
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if c, err = scanCharge(tx.QueryRow(ctx, "SELECT "+chargeColumns+" FROM charges WHERE id = $1 FOR UPDATE", id)); err != nil {
			return err
		}
		acct, err = withAccount(ctx, tx, c.AppID, c.TenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&c, a) })
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE charges SET status = $2, subscription_id = $3, invoice_id = $4, updated_at = $5 WHERE id = $1",
			c.ID, c.Status, c.SubscriptionID, c.InvoiceID, c.UpdatedAt)
		if err != nil {
			return fmt.Errorf("update charge: %w", err)
		}
		return nil
	})
	if err != nil {
		return domain.Charge{}, domain.Account{}, err
	}
	return c, acct, nil
}

// TenantCharges lists the tenant's charges, newest first.
func (s *Store) TenantCharges(ctx context.Context, appID, tenantID string, limit int) ([]domain.Charge, error) {
	if !isUUID(tenantID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT "+chargeColumns+` FROM charges WHERE app_id = $1 AND tenant_id = $2
		ORDER BY created_at DESC, id DESC LIMIT $3`, appID, tenantID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Charge, error) { return scanCharge(r) })
}
