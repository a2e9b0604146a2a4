package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// SaveCustomer inserts c unless the (connection, tenant, mode) has a customer, then reads the one
// stored.
func (s *Store) SaveCustomer(ctx context.Context, c domain.Customer) (domain.Customer, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO customers (provider_customer_id, connection_id, app_id, tenant_id, test, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (connection_id, tenant_id, test) DO NOTHING`,
		c.ID, c.ConnectionID, c.AppID, c.TenantID, c.Test, c.CreatedAt); err != nil {
		return domain.Customer{}, fmt.Errorf("insert customer: %w", err)
	}
	return s.Customer(ctx, c.ConnectionID, c.TenantID, c.Test)
}

// Customer reads the tenant's customer on a connection and mode.
func (s *Store) Customer(ctx context.Context, connectionID, tenantID string, test bool) (domain.Customer, error) {
	if !isUUID(connectionID) || !isUUID(tenantID) {
		return domain.Customer{}, domain.ErrCustomerNotFound
	}
	return scanCustomer(pgxx.Q(ctx, s.pool).QueryRow(ctx, "SELECT "+customerColumns+
		" FROM customers WHERE connection_id = $1 AND tenant_id = $2 AND test = $3", connectionID, tenantID, test))
}

// CustomerByProviderID reads the customer with the provider's id.
func (s *Store) CustomerByProviderID(ctx context.Context, providerCustomerID string) (domain.Customer, error) {
	return scanCustomer(pgxx.Q(ctx, s.pool).QueryRow(ctx, "SELECT "+customerColumns+
		" FROM customers WHERE provider_customer_id = $1", providerCustomerID))
}

const customerColumns = "provider_customer_id, connection_id::text, app_id::text, tenant_id::text, test, created_at"

func scanCustomer(row pgx.Row) (domain.Customer, error) {
	var c domain.Customer
	err := row.Scan(&c.ID, &c.ConnectionID, &c.AppID, &c.TenantID, &c.Test, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Customer{}, domain.ErrCustomerNotFound
	}
	if err != nil {
		return domain.Customer{}, fmt.Errorf("select customer: %w", err)
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return c, nil
}
