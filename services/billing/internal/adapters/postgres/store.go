package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is the name billing's migrations are recorded under.
const Component = "billing"

// Migrate applies billing's migrations and the shared outbox tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	if err := pgxx.Migrate(ctx, pool, Component, sub); err != nil {
		return fmt.Errorf("billing migrations: %w", err)
	}
	if err := pgxx.Migrate(ctx, pool, "events", events.Migrations); err != nil {
		return fmt.Errorf("events migrations: %w", err)
	}
	return nil
}

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// webhookSecret is the stored JSON form of a domain.WebhookSecret ([]byte becomes base64).
type webhookSecret struct {
	ID        string    `json:"id"`
	Test      bool      `json:"test"`
	Sealed    []byte    `json:"sealed"`
	CreatedAt time.Time `json:"createdAt"`
}

const connectionColumns = "id::text, app_id::text, provider, test_key, live_key, webhook_secrets, created_at, updated_at"

func scanConnection(row pgx.Row) (domain.Connection, error) {
	var c domain.Connection
	var provider string
	var secrets []webhookSecret
	if err := row.Scan(&c.ID, &c.AppID, &provider, &c.TestKey, &c.LiveKey, &secrets, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return domain.Connection{}, err
	}
	c.Provider = domain.Provider(provider)
	for _, w := range secrets {
		c.WebhookSecrets = append(c.WebhookSecrets, domain.WebhookSecret{ID: w.ID, Test: w.Test, Sealed: w.Sealed, CreatedAt: w.CreatedAt.UTC()})
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func secretsJSON(c domain.Connection) []webhookSecret {
	out := []webhookSecret{}
	for _, w := range c.WebhookSecrets {
		out = append(out, webhookSecret{ID: w.ID, Test: w.Test, Sealed: w.Sealed, CreatedAt: w.CreatedAt})
	}
	return out
}

// CreateConnection inserts c.
func (s *Store) CreateConnection(ctx context.Context, c domain.Connection) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO connections (id, app_id, provider, test_key, live_key, webhook_secrets, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.AppID, string(c.Provider), c.TestKey, c.LiveKey, secretsJSON(c), c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert connection: %w", err)
	}
	return nil
}

// Connection reads a connection by id.
func (s *Store) Connection(ctx context.Context, id string) (domain.Connection, error) {
	return s.connection(ctx, pgxx.Q(ctx, s.pool), id, "")
}

func (s *Store) connection(ctx context.Context, q pgxx.Querier, id, lock string) (domain.Connection, error) {
	if !isUUID(id) {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	c, err := scanConnection(q.QueryRow(ctx, "SELECT "+connectionColumns+" FROM connections WHERE id = $1"+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	if err != nil {
		return domain.Connection{}, fmt.Errorf("select connection: %w", err)
	}
	return c, nil
}

// Connections lists an app's connections, oldest first.
func (s *Store) Connections(ctx context.Context, appID string) ([]domain.Connection, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+connectionColumns+" FROM connections WHERE app_id = $1 ORDER BY created_at, id", appID)
	if err != nil {
		return nil, fmt.Errorf("select connections: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Connection, error) { return scanConnection(r) })
}

// UpdateConnection locks the connection row, runs fn and stores the result.
func (s *Store) UpdateConnection(ctx context.Context, id string, fn func(*domain.Connection) error) (domain.Connection, error) {
	var out domain.Connection
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		c, err := s.connection(ctx, tx, id, " FOR UPDATE")
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE connections SET test_key = $2, live_key = $3, webhook_secrets = $4, updated_at = $5 WHERE id = $1`,
			c.ID, c.TestKey, c.LiveKey, secretsJSON(c), c.UpdatedAt)
		out = c
		return err
	})
	return out, err
}

const settingsColumns = "app_id::text, connection_id, payment_return_url, failed_payments_to_freeze, one_time_payment_valid_days, referral_promotion_id, renewal_line_description"

func (s *Store) settings(ctx context.Context, q pgxx.Querier, appID, lock string) (domain.Settings, error) {
	var st domain.Settings
	err := q.QueryRow(ctx, "SELECT "+settingsColumns+" FROM app_settings WHERE app_id = $1"+lock, appID).Scan(
		&st.AppID, &st.ConnectionID, &st.PaymentReturnURL, &st.FailedPaymentsToFreeze, &st.OneTimePaymentValidDays, &st.ReferralPromotionID, &st.RenewalLineDescription)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.DefaultSettings(appID), nil
	}
	if err != nil {
		return domain.Settings{}, fmt.Errorf("select settings: %w", err)
	}
	return st, nil
}

// Settings reads an app's settings or the defaults.
func (s *Store) Settings(ctx context.Context, appID string) (domain.Settings, error) {
	return s.settings(ctx, pgxx.Q(ctx, s.pool), appID, "")
}

// UpdateSettings creates the settings row if needed, locks it, runs fn and stores the result.
func (s *Store) UpdateSettings(ctx context.Context, appID string, fn func(*domain.Settings) error) (domain.Settings, error) {
	var out domain.Settings
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		d := domain.DefaultSettings(appID)
		if _, err := tx.Exec(ctx, `INSERT INTO app_settings (app_id, failed_payments_to_freeze, one_time_payment_valid_days)
			VALUES ($1, $2, $3) ON CONFLICT (app_id) DO NOTHING`, appID, d.FailedPaymentsToFreeze, d.OneTimePaymentValidDays); err != nil {
			return fmt.Errorf("insert settings: %w", err)
		}
		st, err := s.settings(ctx, tx, appID, " FOR UPDATE")
		if err != nil {
			return err
		}
		if err := fn(&st); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE app_settings SET connection_id = $2, payment_return_url = $3, failed_payments_to_freeze = $4,
			one_time_payment_valid_days = $5, referral_promotion_id = $6, renewal_line_description = $7 WHERE app_id = $1`,
			appID, st.ConnectionID, st.PaymentReturnURL, st.FailedPaymentsToFreeze, st.OneTimePaymentValidDays, st.ReferralPromotionID,
			st.RenewalLineDescription)
		out = st
		return err
	})
	return out, err
}

// CreateCatalogPrice inserts p.
func (s *Store) CreateCatalogPrice(ctx context.Context, p domain.CatalogPrice) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO catalog_prices (id, app_id, product_name, amount, currency, interval, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, p.ID, p.AppID, p.ProductName, p.Amount, p.Currency, p.Interval, p.CreatedAt)
	return err
}

// CreateCatalogTaxRate inserts r.
func (s *Store) CreateCatalogTaxRate(ctx context.Context, r domain.CatalogTaxRate) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO catalog_tax_rates (id, app_id, display_name, basis_points, inclusive, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, r.AppID, r.DisplayName, r.BasisPoints, r.Inclusive, r.CreatedAt)
	return err
}

// Catalog lists an app's prices and tax rates, oldest first.
func (s *Store) Catalog(ctx context.Context, appID string) ([]domain.CatalogPrice, []domain.CatalogTaxRate, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, app_id::text, product_name, amount, currency, interval, created_at
		FROM catalog_prices WHERE app_id = $1 ORDER BY created_at, id`, appID)
	if err != nil {
		return nil, nil, err
	}
	prices, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.CatalogPrice, error) {
		var p domain.CatalogPrice
		err := r.Scan(&p.ID, &p.AppID, &p.ProductName, &p.Amount, &p.Currency, &p.Interval, &p.CreatedAt)
		p.CreatedAt = p.CreatedAt.UTC()
		return p, err
	})
	if err != nil {
		return nil, nil, err
	}
	rows, err = s.pool.Query(ctx, `SELECT id, app_id::text, display_name, basis_points, inclusive, created_at
		FROM catalog_tax_rates WHERE app_id = $1 ORDER BY created_at, id`, appID)
	if err != nil {
		return nil, nil, err
	}
	rates, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.CatalogTaxRate, error) {
		var t domain.CatalogTaxRate
		err := r.Scan(&t.ID, &t.AppID, &t.DisplayName, &t.BasisPoints, &t.Inclusive, &t.CreatedAt)
		t.CreatedAt = t.CreatedAt.UTC()
		return t, err
	})
	return prices, rates, err
}

const promotionColumns = `id::text, app_id::text, code, name, description, free_units, free_days, valid_from, valid_until,
	max_redemptions, redemptions, active, created_at`

func scanPromotion(row pgx.Row) (domain.Promotion, error) {
	var p domain.Promotion
	var from, until *time.Time
	if err := row.Scan(&p.ID, &p.AppID, &p.Code, &p.Name, &p.Description, &p.FreeUnits, &p.FreeDays, &from, &until,
		&p.MaxRedemptions, &p.Redemptions, &p.Active, &p.CreatedAt); err != nil {
		return domain.Promotion{}, err
	}
	if from != nil {
		p.ValidFrom = from.UTC()
	}
	if until != nil {
		p.ValidUntil = until.UTC()
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// CreatePromotion inserts p; the app's code is unique.
func (s *Store) CreatePromotion(ctx context.Context, p domain.Promotion) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO promotions (id, app_id, code, name, description, free_units, free_days, valid_from,
		valid_until, max_redemptions, redemptions, active, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		p.ID, p.AppID, p.Code, p.Name, p.Description, p.FreeUnits, p.FreeDays, nullTime(p.ValidFrom), nullTime(p.ValidUntil),
		p.MaxRedemptions, p.Redemptions, p.Active, p.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return domain.ErrCodeTaken
	}
	return err
}

// Promotions lists an app's promotions, oldest first.
func (s *Store) Promotions(ctx context.Context, appID string) ([]domain.Promotion, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+promotionColumns+" FROM promotions WHERE app_id = $1 ORDER BY created_at, id", appID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Promotion, error) { return scanPromotion(r) })
}

func savePromotion(ctx context.Context, tx pgx.Tx, p domain.Promotion) error {
	_, err := tx.Exec(ctx, `UPDATE promotions SET redemptions = $2, active = $3 WHERE id = $1`, p.ID, p.Redemptions, p.Active)
	return err
}

// UpdatePromotion locks the app's promotion, runs fn and stores the counters and the switch.
func (s *Store) UpdatePromotion(ctx context.Context, appID, id string, fn func(*domain.Promotion) error) (domain.Promotion, error) {
	var out domain.Promotion
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if !isUUID(id) {
			return domain.ErrPromotionNotFound
		}
		p, err := lockPromotion(ctx, tx, appID, "id", id)
		if err != nil {
			return err
		}
		if err := fn(&p); err != nil {
			return err
		}
		out = p
		return savePromotion(ctx, tx, p)
	})
	return out, err
}

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

// Redeem locks the promotion (serialising its redemptions), records the tenant's redemption
// unless it has one, and commits promotion, account, redemption and events together.
func (s *Store) Redeem(ctx context.Context, r app.Redemption, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	a, err := s.applyPromotion(ctx, r.AppID, "code", r.Code, r.TenantID, fn,
		`INSERT INTO redemptions (promotion_id, tenant_id, user_id, redeemed_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		r.TenantID, r.UserID, r.At)
	if errors.Is(err, domain.ErrPromotionNotFound) || errors.Is(err, errClaimed) {
		return domain.Account{}, domain.ErrUnknownCode
	}
	return a, err
}

// GrantReferralReward locks the promotion, records the referred tenant's reward unless it has
// one, and commits promotion, the referrer's account, the reward and events together.
func (s *Store) GrantReferralReward(ctx context.Context, g app.ReferralGrant, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	if !isUUID(g.PromotionID) {
		return domain.Account{}, domain.ErrPromotionNotFound
	}
	a, err := s.applyPromotion(ctx, g.AppID, "id", g.PromotionID, g.ReferrerTenantID, fn,
		`INSERT INTO referral_rewards (promotion_id, referred_tenant_id, app_id, referrer_tenant_id, referrer_user_id, granted_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		g.ReferredTenantID, g.AppID, g.ReferrerTenantID, g.ReferrerUserID, g.At)
	if errors.Is(err, errClaimed) {
		return domain.Account{}, domain.ErrReferralRewarded
	}
	return a, err
}

// errClaimed says the once-only record of a promotion's use exists already.
var errClaimed = errors.New("claimed before")

// applyPromotion locks the app's promotion whose column ("id" or "code") is value, inserts the
// once-only record of this use (claim, given the promotion's id as $1 before args; errClaimed
// when it exists), then locks the tenant's account, runs fn on both and stores both with fn's
// events: the effect and the record that it happened commit together. Taking the promotion's
// lock first serialises its uses, so its maximum of redemptions holds.
func (s *Store) applyPromotion(ctx context.Context, appID, column, value, tenantID string,
	fn func(*domain.Promotion, *domain.Account) ([]events.Event, error), claim string, args ...any) (domain.Account, error) {
	var out domain.Account
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		p, err := lockPromotion(ctx, tx, appID, column, value)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, claim, append([]any{p.ID}, args...)...)
		if err != nil {
			return fmt.Errorf("record the promotion's use: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return errClaimed
		}
		out, err = withAccount(ctx, tx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&p, a) })
		if err != nil {
			return err
		}
		return savePromotion(ctx, tx, p)
	})
	return out, err
}

// lockPromotion reads the app's promotion whose column ("id" or "code") is value, locked for the
// transaction; domain.ErrPromotionNotFound when absent.
func lockPromotion(ctx context.Context, tx pgx.Tx, appID, column, value string) (domain.Promotion, error) {
	p, err := scanPromotion(tx.QueryRow(ctx, "SELECT "+promotionColumns+" FROM promotions WHERE app_id = $1 AND "+column+" = $2 FOR UPDATE", appID, value))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Promotion{}, domain.ErrPromotionNotFound
	}
	return p, err
}

// isUUID guards uuid columns: a malformed id matches nothing, rather than failing the query.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}

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
