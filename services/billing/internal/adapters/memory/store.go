package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Store implements app.Store. One mutex serialises every write, which is the memory form of the
// Postgres store's row locks.
type Store struct {
	mu          sync.Mutex
	connections []domain.Connection
	settings    map[string]domain.Settings
	prices      []domain.CatalogPrice
	taxRates    []domain.CatalogTaxRate
	promotions  []domain.Promotion
	redeemed    map[[2]string]bool // (promotion id, tenant id)
	rewarded    map[string]bool    // referred tenant ids
	accounts    map[[2]string]domain.Account
	customers   []domain.Customer
	checkouts   map[string]domain.CheckoutSession
	charges     map[string]domain.Charge
	outbox      *events.MemoryOutbox
}

// New returns an empty store whose events go to outbox.
func New(outbox *events.MemoryOutbox) *Store {
	return &Store{settings: map[string]domain.Settings{}, redeemed: map[[2]string]bool{}, rewarded: map[string]bool{},
		accounts: map[[2]string]domain.Account{}, checkouts: map[string]domain.CheckoutSession{}, charges: map[string]domain.Charge{}, outbox: outbox}
}

func cloneConnection(c domain.Connection) domain.Connection {
	c.TestKey, c.LiveKey = slices.Clone(c.TestKey), slices.Clone(c.LiveKey)
	c.WebhookSecrets = slices.Clone(c.WebhookSecrets)
	for i := range c.WebhookSecrets {
		c.WebhookSecrets[i].Sealed = slices.Clone(c.WebhookSecrets[i].Sealed)
	}
	return c
}

// CreateConnection stores c.
func (s *Store) CreateConnection(_ context.Context, c domain.Connection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connections = append(s.connections, cloneConnection(c))
	return nil
}

// Connection returns the connection with id.
func (s *Store) Connection(_ context.Context, id string) (domain.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.connections, func(c domain.Connection) bool { return c.ID == id })
	if i < 0 {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	return cloneConnection(s.connections[i]), nil
}

// Connections lists the app's connections.
func (s *Store) Connections(_ context.Context, appID string) ([]domain.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Connection
	for _, c := range s.connections {
		if c.AppID == appID {
			out = append(out, cloneConnection(c))
		}
	}
	return out, nil
}

// UpdateConnection runs fn on a copy and stores it when fn succeeds.
func (s *Store) UpdateConnection(_ context.Context, id string, fn func(*domain.Connection) error) (domain.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.connections, func(c domain.Connection) bool { return c.ID == id })
	if i < 0 {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	next := cloneConnection(s.connections[i])
	if err := fn(&next); err != nil {
		return domain.Connection{}, err
	}
	s.connections[i] = cloneConnection(next)
	return next, nil
}

// Settings returns the app's settings or the defaults.
func (s *Store) Settings(_ context.Context, appID string) (domain.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settingsOf(appID), nil
}

func (s *Store) settingsOf(appID string) domain.Settings {
	if st, ok := s.settings[appID]; ok {
		return st
	}
	return domain.DefaultSettings(appID)
}

// UpdateSettings runs fn on the app's settings and stores them when fn succeeds.
func (s *Store) UpdateSettings(_ context.Context, appID string, fn func(*domain.Settings) error) (domain.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settingsOf(appID)
	if err := fn(&st); err != nil {
		return domain.Settings{}, err
	}
	s.settings[appID] = st
	return st, nil
}

// CreateCatalogPrice stores p.
func (s *Store) CreateCatalogPrice(_ context.Context, p domain.CatalogPrice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prices = append(s.prices, p)
	return nil
}

// CreateCatalogTaxRate stores r.
func (s *Store) CreateCatalogTaxRate(_ context.Context, r domain.CatalogTaxRate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taxRates = append(s.taxRates, r)
	return nil
}

// Catalog lists the app's prices and tax rates.
func (s *Store) Catalog(_ context.Context, appID string) ([]domain.CatalogPrice, []domain.CatalogTaxRate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var prices []domain.CatalogPrice
	var rates []domain.CatalogTaxRate
	for _, p := range s.prices {
		if p.AppID == appID {
			prices = append(prices, p)
		}
	}
	for _, r := range s.taxRates {
		if r.AppID == appID {
			rates = append(rates, r)
		}
	}
	return prices, rates, nil
}

// CreatePromotion stores p unless the app has its code.
func (s *Store) CreatePromotion(_ context.Context, p domain.Promotion) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.promotions, func(q domain.Promotion) bool { return q.AppID == p.AppID && q.Code == p.Code }) {
		return domain.ErrCodeTaken
	}
	s.promotions = append(s.promotions, p)
	return nil
}

// Promotions lists the app's promotions.
func (s *Store) Promotions(_ context.Context, appID string) ([]domain.Promotion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Promotion
	for _, p := range s.promotions {
		if p.AppID == appID {
			out = append(out, p)
		}
	}
	return out, nil
}

// UpdatePromotion runs fn on the app's promotion and stores it when fn succeeds.
func (s *Store) UpdatePromotion(_ context.Context, appID, id string, fn func(*domain.Promotion) error) (domain.Promotion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == appID && p.ID == id })
	if i < 0 {
		return domain.Promotion{}, domain.ErrPromotionNotFound
	}
	next := s.promotions[i]
	if err := fn(&next); err != nil {
		return domain.Promotion{}, err
	}
	s.promotions[i] = next
	return next, nil
}

// Account returns the tenant's account, the zero account when none is stored.
func (s *Store) Account(_ context.Context, appID, tenantID string) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accountOf(appID, tenantID), nil
}

func (s *Store) accountOf(appID, tenantID string) domain.Account {
	if a, ok := s.accounts[[2]string{appID, tenantID}]; ok {
		return a
	}
	return domain.Account{AppID: appID, TenantID: tenantID}
}

// Redeem applies fn to the promotion and the account under the store's lock, once per tenant.
func (s *Store) Redeem(ctx context.Context, r app.Redemption, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == r.AppID && p.Code == r.Code })
	if i < 0 || s.redeemed[[2]string{s.promotions[i].ID, r.TenantID}] {
		return domain.Account{}, domain.ErrUnknownCode
	}
	return s.applyPromotion(ctx, i, r.TenantID, fn, func() { s.redeemed[[2]string{s.promotions[i].ID, r.TenantID}] = true })
}

// GrantReferralReward applies fn to the promotion and the referrer's account under the store's
// lock, once per referred tenant.
func (s *Store) GrantReferralReward(ctx context.Context, g app.ReferralGrant, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == g.AppID && p.ID == g.PromotionID })
	switch {
	case i < 0:
		return domain.Account{}, domain.ErrPromotionNotFound
	case s.rewarded[g.ReferredTenantID]:
		return domain.Account{}, domain.ErrReferralRewarded
	}
	return s.applyPromotion(ctx, i, g.ReferrerTenantID, fn, func() { s.rewarded[g.ReferredTenantID] = true })
}

// applyPromotion runs fn on copies of promotion i and the tenant's account and, when it succeeds,
// stores both, records the use and queues fn's events. The caller holds the store's lock.
func (s *Store) applyPromotion(ctx context.Context, i int, tenantID string, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error), record func()) (domain.Account, error) {
	p := s.promotions[i]
	a, err := s.withAccount(ctx, p.AppID, tenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&p, a) })
	if err != nil {
		return domain.Account{}, err
	}
	s.promotions[i] = p
	record()
	return a, nil
}

// SaveCustomer stores c unless its connection, tenant and mode have one, and returns the stored one.
func (s *Store) SaveCustomer(_ context.Context, c domain.Customer) (domain.Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.customerOf(c.ConnectionID, c.TenantID, c.Test); ok {
		return got, nil
	}
	s.customers = append(s.customers, c)
	return c, nil
}

// Customer returns the tenant's customer on a connection and mode.
func (s *Store) Customer(_ context.Context, connectionID, tenantID string, test bool) (domain.Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.customerOf(connectionID, tenantID, test); ok {
		return c, nil
	}
	return domain.Customer{}, domain.ErrCustomerNotFound
}

// CustomerByProviderID returns the customer with the provider's id.
func (s *Store) CustomerByProviderID(_ context.Context, providerCustomerID string) (domain.Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.customers, func(c domain.Customer) bool { return c.ID == providerCustomerID })
	if i < 0 {
		return domain.Customer{}, domain.ErrCustomerNotFound
	}
	return s.customers[i], nil
}

func (s *Store) customerOf(connectionID, tenantID string, test bool) (domain.Customer, bool) {
	i := slices.IndexFunc(s.customers, func(c domain.Customer) bool {
		return c.ConnectionID == connectionID && c.TenantID == tenantID && c.Test == test
	})
	if i < 0 {
		return domain.Customer{}, false
	}
	return s.customers[i], true
}

// CreateCheckout stores a new session.
func (s *Store) CreateCheckout(_ context.Context, c domain.CheckoutSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkouts[c.ID] = c
	return nil
}

// Checkout returns a session.
func (s *Store) Checkout(_ context.Context, id string) (domain.CheckoutSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.checkouts[id]
	if !ok {
		return domain.CheckoutSession{}, domain.ErrCheckoutNotFound
	}
	return c, nil
}

// SettleCheckout applies fn to the session and its account under the store's lock.
func (s *Store) SettleCheckout(ctx context.Context, id string, fn func(*domain.CheckoutSession, *domain.Account) ([]events.Event, error)) (domain.CheckoutSession, domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.checkouts[id]
	if !ok {
		return domain.CheckoutSession{}, domain.Account{}, domain.ErrCheckoutNotFound
	}
	a, err := s.withAccount(ctx, cs.AppID, cs.TenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&cs, a) })
	if err != nil {
		return domain.CheckoutSession{}, domain.Account{}, err
	}
	s.checkouts[id] = cs
	return cs, a, nil
}

// withAccount runs fn on a copy of the tenant's account and stores the copy and fn's events
// when fn succeeds. The caller holds the store's lock.
func (s *Store) withAccount(ctx context.Context, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error) {
	a := s.accountOf(appID, tenantID)
	evs, err := fn(&a)
	if err != nil {
		return domain.Account{}, err
	}
	s.accounts[[2]string{a.AppID, a.TenantID}] = a
	s.outbox.Add(ctx, evs...)
	return a, nil
}

// UpdateAccount changes a tenant's account under the store's lock.
func (s *Store) UpdateAccount(ctx context.Context, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withAccount(ctx, appID, tenantID, fn)
}
