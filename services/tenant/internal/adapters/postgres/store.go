package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is the name the tenant tables' migrations are recorded under.
const Component = "tenant"

// Migrate applies the tenant tables' migrations and the shared outbox tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: migrationFiles, Dir: "migrations"},
		pgxx.Set{Component: "events", Files: events.Migrations})
}

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// tenantColumn maps one column to its field; the list is the single source of the column order
// used by SELECT, INSERT and UPDATE.
type tenantColumn struct {
	name  string
	field func(*domain.Tenant) any // pointer to the field
}

var tenantColumns = []tenantColumn{
	{"id", func(t *domain.Tenant) any { return &t.ID }},
	{"app_id", func(t *domain.Tenant) any { return &t.AppID }},
	{"name", func(t *domain.Tenant) any { return &t.Name }},
	{"description", func(t *domain.Tenant) any { return &t.Description }},
	{"pspx_one_time_payment_valid_thru", func(t *domain.Tenant) any { return &t.PspxOneTimePaymentValidThru }},
	{"company_name", func(t *domain.Tenant) any { return &t.CompanyName }},
	{"company_vat_id", func(t *domain.Tenant) any { return &t.CompanyVATID }},
	{"company_tax_type", func(t *domain.Tenant) any { return &t.CompanyTaxType }},
	{"company_tax_exempt", func(t *domain.Tenant) any { return &t.CompanyTaxExempt }},
	{"is_business_customer", func(t *domain.Tenant) any { return &t.IsBusinessCustomer }},
	{"is_invoice_pending", func(t *domain.Tenant) any { return &t.IsInvoicePending }},
	{"deleted", func(t *domain.Tenant) any { return &t.Deleted }},
	{"pspx_customer_id", func(t *domain.Tenant) any { return &t.Billing.PspxCustomerID }},
	{"pspx_price_id", func(t *domain.Tenant) any { return &t.Billing.PspxPriceID }},
	{"pspx_product_id", func(t *domain.Tenant) any { return &t.Billing.PspxProductID }},
	{"pspx_subscription_id", func(t *domain.Tenant) any { return &t.Billing.PspxSubscriptionID }},
	{"pspx_trialing_price_id", func(t *domain.Tenant) any { return &t.Billing.PspxTrialingPriceID }},
	{"pspx_trialing_product_id", func(t *domain.Tenant) any { return &t.Billing.PspxTrialingProductID }},
	{"pspx_trialing_subscription_id", func(t *domain.Tenant) any { return &t.Billing.PspxTrialingSubscriptionID }},
	{"pspx_checkout_session_id", func(t *domain.Tenant) any { return &t.Billing.PspxCheckoutSessionID }},
	{"pspx_default_payment_method_id", func(t *domain.Tenant) any { return &t.Billing.PspxDefaultPaymentMethodID }},
	{"pspx_subscription_cancel_at_period_end", func(t *domain.Tenant) any { return &t.Billing.PspxSubscriptionCancelAtPeriodEnd }},
	{"pspx_subscription_cancel_at", func(t *domain.Tenant) any { return &t.Billing.PspxSubscriptionCancelAt }},
	{"pspx_payment_method", func(t *domain.Tenant) any { return &t.Billing.PspxPaymentMethod }},
	{"mode", func(t *domain.Tenant) any { return &t.Billing.Mode }},
	{"freezed_due_failed_payment", func(t *domain.Tenant) any { return &t.Billing.FreezedDueFailedPayment }},
	{"paid_until", func(t *domain.Tenant) any { return &t.Billing.PaidUntil }},
	{"free_until", func(t *domain.Tenant) any { return &t.Billing.FreeUntil }},
	{"paid_units", func(t *domain.Tenant) any { return &t.Billing.PaidUnits }},
	{"free_units", func(t *domain.Tenant) any { return &t.Billing.FreeUnits }},
	{"freezed", func(t *domain.Tenant) any { return &t.Billing.Freezed }},
	{"payment_failed", func(t *domain.Tenant) any { return &t.Billing.PaymentFailed }},
	{"payment_failed_count", func(t *domain.Tenant) any { return &t.Billing.PaymentFailedCount }},
	{"payment_failed_date", func(t *domain.Tenant) any { return &t.Billing.PaymentFailedDate }},
	{"billing_revision", func(t *domain.Tenant) any { return &t.BillingRevision }},
	{"created_at", func(t *domain.Tenant) any { return &t.CreatedAt }},
	{"updated_at", func(t *domain.Tenant) any { return &t.UpdatedAt }},
}

var (
	columnList   = joinColumns(func(c tenantColumn) string { return c.name })
	insertTenant = fmt.Sprintf("INSERT INTO tenants (%s) VALUES (%s)", columnList, placeholders(len(tenantColumns)))
	// The tenant and its addresses (at most one of each type) come in one statement, one row per
	// address or a single row without one: one round trip and one snapshot, so a read never pairs
	// a tenant with addresses of another moment. ids are read as text so they come back in the
	// canonical lower-case form the domain uses.
	selectTenant = "SELECT " + joinColumns(func(c tenantColumn) string {
		if c.name == "id" || c.name == "app_id" {
			return "t." + c.name + "::text"
		}
		return "t." + c.name
	}) + `, a.id::text, a.type, a.name, a.city, a.country, a.line1, a.line2, a.postal_code, a.state, a.deleted
		FROM tenants t LEFT JOIN tenant_addresses a ON a.tenant_id = t.id WHERE t.id = $1 AND t.app_id = $2`
	// UPDATE binds every column but created_at, which never changes; id and app_id come first in
	// tenantColumns, so they are $1 and $2 and serve as the WHERE clause.
	updateTenant = func() string {
		var sets []string
		for i, c := range updatableColumns() {
			if i >= 2 {
				sets = append(sets, fmt.Sprintf("%s = $%d", c.name, i+1))
			}
		}
		return "UPDATE tenants SET " + strings.Join(sets, ", ") + " WHERE id = $1 AND app_id = $2"
	}()
)

func updatableColumns() []tenantColumn {
	var out []tenantColumn
	for _, c := range tenantColumns {
		if c.name != "created_at" {
			out = append(out, c)
		}
	}
	return out
}

func joinColumns(f func(tenantColumn) string) string {
	parts := make([]string, len(tenantColumns))
	for i, c := range tenantColumns {
		parts[i] = f(c)
	}
	return strings.Join(parts, ", ")
}

func placeholders(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(parts, ", ")
}

// values returns pointers to the tenant's fields in the order of cols.
func values(t *domain.Tenant, cols []tenantColumn) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = c.field(t)
	}
	return out
}

// CreateTenant inserts t, its addresses and its events in one transaction.
func (s *Store) CreateTenant(ctx context.Context, t domain.Tenant, evs ...events.Event) error {
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertTenant, values(&t, tenantColumns)...); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23505" {
				return domain.ErrExists
			}
			return fmt.Errorf("insert tenant: %w", err)
		}
		if err := saveAddresses(ctx, tx, &t); err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// GetTenant reads the app's tenant with its addresses.
func (s *Store) GetTenant(ctx context.Context, appID, tenantID string) (domain.Tenant, error) {
	return load(ctx, pgxx.Q(ctx, s.pool), appID, tenantID, "")
}

// UpdateTenant locks the tenant row for the transaction, so concurrent patches apply one after
// the other instead of overwriting each other.
func (s *Store) UpdateTenant(ctx context.Context, appID, tenantID string, fn func(*domain.Tenant) ([]events.Event, error)) error {
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		t, err := load(ctx, tx, appID, tenantID, " FOR UPDATE OF t")
		if err != nil {
			return err
		}
		evs, err := fn(&t)
		if err != nil {
			return err
		}
		t.ID, t.AppID = tenantID, appID
		if _, err := tx.Exec(ctx, updateTenant, values(&t, updatableColumns())...); err != nil {
			return fmt.Errorf("update tenant: %w", err)
		}
		if err := saveAddresses(ctx, tx, &t); err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// load reads the tenant with its addresses; lock is "" or a row lock on the tenant (" FOR UPDATE
// OF t": the addresses' side of the join may be empty, so only the tenant row is locked).
func load(ctx context.Context, q pgxx.Querier, appID, tenantID, lock string) (domain.Tenant, error) {
	rows, err := q.Query(ctx, selectTenant+lock, tenantID, appID)
	if err != nil {
		return domain.Tenant{}, fmt.Errorf("select tenant: %w", err)
	}
	defer rows.Close()
	var (
		t     domain.Tenant
		found bool
		a     struct {
			id, typ, name, city, country, line1, line2, postalCode, state *string
			deleted                                                       *bool
		}
	)
	dest := append(values(&t, tenantColumns), &a.id, &a.typ, &a.name, &a.city, &a.country, &a.line1, &a.line2, &a.postalCode, &a.state, &a.deleted)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return domain.Tenant{}, fmt.Errorf("scan tenant: %w", err)
		}
		found = true
		if a.id == nil { // a tenant without addresses
			continue
		}
		addr := &domain.Address{ID: *a.id, Type: *a.typ, Name: *a.name, City: *a.city, Country: *a.country, Line1: *a.line1,
			Line2: *a.line2, PostalCode: *a.postalCode, State: *a.state, Deleted: *a.deleted}
		switch addr.Type {
		case domain.AddressShipping:
			t.ShippingAddress = addr
		case domain.AddressBilling:
			t.BillingAddress = addr
		}
	}
	if err := rows.Err(); err != nil {
		return domain.Tenant{}, fmt.Errorf("read tenant: %w", err)
	}
	if !found {
		return domain.Tenant{}, domain.ErrNotFound
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, nil
}

// saveAddresses upserts the tenant's addresses; an address is never removed by a patch.
func saveAddresses(ctx context.Context, q pgxx.Querier, t *domain.Tenant) error {
	for _, a := range []*domain.Address{t.ShippingAddress, t.BillingAddress} {
		if a == nil {
			continue
		}
		_, err := q.Exec(ctx, `INSERT INTO tenant_addresses
			(id, tenant_id, type, name, city, country, line1, line2, postal_code, state, deleted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (tenant_id, type) DO UPDATE SET name = EXCLUDED.name, city = EXCLUDED.city,
				country = EXCLUDED.country, line1 = EXCLUDED.line1, line2 = EXCLUDED.line2,
				postal_code = EXCLUDED.postal_code, state = EXCLUDED.state, deleted = EXCLUDED.deleted`,
			a.ID, t.ID, a.Type, a.Name, a.City, a.Country, a.Line1, a.Line2, a.PostalCode, a.State, a.Deleted)
		if err != nil {
			return fmt.Errorf("save %s address: %w", a.Type, err)
		}
	}
	return nil
}
