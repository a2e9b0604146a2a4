package app

import (
	"context"
	"slices"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// NewConnection is what an operator gives to connect an app to a provider. Secrets arrive in clear
// and are sealed before anything stores them.
type NewConnection struct {
	AppID             string
	Provider          string
	TestSecretKey     string
	LiveSecretKey     string
	TestWebhookSecret string
	LiveWebhookSecret string
}

// CreateConnection stores a connection; the app's first one becomes the one its checkouts use.
func (s *Service) CreateConnection(ctx context.Context, n NewConnection) (domain.Connection, error) {
	appID := canonical(n.AppID)
	if !isUUID(appID) {
		return domain.Connection{}, fault.InvalidField("appId", "must be a UUID")
	}
	p, err := domain.ParseProvider(n.Provider)
	if err != nil {
		return domain.Connection{}, err
	}
	if n.TestSecretKey == "" && n.LiveSecretKey == "" {
		return domain.Connection{}, fault.InvalidField("testSecretKey", "a test or a live secret key is required")
	}
	now := s.now()
	c := domain.Connection{ID: s.newID(), AppID: appID, Provider: p, CreatedAt: now, UpdatedAt: now}
	if err := s.setSecrets(&c, n.TestSecretKey, n.LiveSecretKey, n.TestWebhookSecret, n.LiveWebhookSecret); err != nil {
		return domain.Connection{}, err
	}
	if err := s.store.CreateConnection(ctx, c); err != nil {
		return domain.Connection{}, err
	}
	_, err = s.store.UpdateSettings(ctx, appID, func(st *domain.Settings) error {
		if st.ConnectionID == "" {
			st.ConnectionID = c.ID
		}
		return nil
	})
	return c, err
}

// SecretRotation replaces keys and adds or retires webhook secrets of a connection.
type SecretRotation struct {
	ConnectionID      string
	TestSecretKey     string
	LiveSecretKey     string
	TestWebhookSecret string
	LiveWebhookSecret string
	RetireWebhookIDs  []string
}

// RotateConnectionSecrets applies r. Retiring a secret that is not there is refused, so a typo
// cannot leave an operator believing a leaked secret is gone.
func (s *Service) RotateConnectionSecrets(ctx context.Context, r SecretRotation) (domain.Connection, error) {
	return s.store.UpdateConnection(ctx, canonical(r.ConnectionID), func(c *domain.Connection) error {
		for _, id := range r.RetireWebhookIDs {
			i := indexOfSecret(c.WebhookSecrets, id)
			if i < 0 {
				return fault.InvalidField("retireWebhookSecretIds", "names no webhook secret of this connection")
			}
			c.WebhookSecrets = append(c.WebhookSecrets[:i], c.WebhookSecrets[i+1:]...)
		}
		c.UpdatedAt = s.now()
		return s.setSecrets(c, r.TestSecretKey, r.LiveSecretKey, r.TestWebhookSecret, r.LiveWebhookSecret)
	})
}

func indexOfSecret(secrets []domain.WebhookSecret, id string) int {
	for i, w := range secrets {
		if w.ID == id {
			return i
		}
	}
	return -1
}

// setSecrets validates and seals the non-empty secrets into c. Each is sealed for its connection
// and role, so a sealed value copied to another row or field does not open.
func (s *Service) setSecrets(c *domain.Connection, testKey, liveKey, testHook, liveHook string) error {
	for _, err := range []error{
		domain.CheckKey(c.Provider, true, testKey), domain.CheckKey(c.Provider, false, liveKey),
		domain.CheckWebhookSecret(c.Provider, "testWebhookSecret", testHook),
		domain.CheckWebhookSecret(c.Provider, "liveWebhookSecret", liveHook),
	} {
		if err != nil {
			return err
		}
	}
	seal := func(v, role string) ([]byte, error) { return s.box.Seal([]byte(v), c.ID+"/"+role) }
	var err error
	if testKey != "" {
		if c.TestKey, err = seal(testKey, "test"); err != nil {
			return fault.Internal(err)
		}
	}
	if liveKey != "" {
		if c.LiveKey, err = seal(liveKey, "live"); err != nil {
			return fault.Internal(err)
		}
	}
	for _, h := range []struct {
		secret string
		test   bool
	}{{testHook, true}, {liveHook, false}} {
		if h.secret == "" {
			continue
		}
		w := domain.WebhookSecret{ID: s.newID(), Test: h.test, CreatedAt: s.now()}
		if w.Sealed, err = seal(h.secret, "webhook/"+w.ID); err != nil {
			return fault.Internal(err)
		}
		c.WebhookSecrets = append(c.WebhookSecrets, w)
	}
	return nil
}

// AppBilling is an app's billing configuration as operators see it.
type AppBilling struct {
	Settings    domain.Settings
	Connections []domain.Connection
}

// GetAppBilling shows an app's settings and connections.
func (s *Service) GetAppBilling(ctx context.Context, appID string) (AppBilling, error) {
	appID = canonical(appID)
	if !isUUID(appID) {
		return AppBilling{}, fault.InvalidField("appId", "must be a UUID")
	}
	st, err := s.store.Settings(ctx, appID)
	if err != nil {
		return AppBilling{}, err
	}
	cs, err := s.store.Connections(ctx, appID)
	if err != nil {
		return AppBilling{}, err
	}
	return AppBilling{Settings: st, Connections: cs}, nil
}

// AppConnectionIDs names the app's provider connections, oldest first, for ingest to hold an
// app's operators to the calls of their own connections.
func (s *Service) AppConnectionIDs(ctx context.Context, appID string) ([]string, error) {
	appID = canonical(appID)
	if !isUUID(appID) {
		return nil, fault.InvalidField("appId", "must be a UUID")
	}
	cs, err := s.store.Connections(ctx, appID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// UpdateAppSettings changes an app's settings; a named connection or referral promotion must be
// the app's own.
func (s *Service) UpdateAppSettings(ctx context.Context, appID string, p domain.SettingsPatch) (AppBilling, error) {
	appID = canonical(appID)
	if !isUUID(appID) {
		return AppBilling{}, fault.InvalidField("appId", "must be a UUID")
	}
	if p.ConnectionID != nil {
		c, err := s.store.Connection(ctx, canonical(*p.ConnectionID))
		if err != nil || c.AppID != appID {
			return AppBilling{}, fault.InvalidField("connectionId", "names no connection of this app")
		}
		*p.ConnectionID = c.ID
	}
	if p.ReferralPromotionID != nil && *p.ReferralPromotionID != "" {
		id := canonical(*p.ReferralPromotionID)
		promos, err := s.store.Promotions(ctx, appID)
		if err != nil {
			return AppBilling{}, err
		}
		if !slices.ContainsFunc(promos, func(pr domain.Promotion) bool { return pr.ID == id }) {
			return AppBilling{}, fault.InvalidField("referralPromotionId", "names no promotion of this app")
		}
		*p.ReferralPromotionID = id
	}
	if _, err := s.store.UpdateSettings(ctx, appID, p.Apply); err != nil {
		return AppBilling{}, err
	}
	return s.GetAppBilling(ctx, appID)
}

// CreateCatalogPrice adds a price to an app's catalog (pspy apps).
func (s *Service) CreateCatalogPrice(ctx context.Context, p domain.CatalogPrice) (domain.CatalogPrice, error) {
	p.AppID = canonical(p.AppID)
	if !isUUID(p.AppID) {
		return domain.CatalogPrice{}, fault.InvalidField("appId", "must be a UUID")
	}
	p.ID, p.CreatedAt = randomID("price_"), s.now()
	p, err := domain.NewCatalogPrice(p)
	if err != nil {
		return domain.CatalogPrice{}, err
	}
	return p, s.store.CreateCatalogPrice(ctx, p)
}

// CreateCatalogTaxRate adds a tax rate to an app's catalog (pspy apps).
func (s *Service) CreateCatalogTaxRate(ctx context.Context, r domain.CatalogTaxRate) (domain.CatalogTaxRate, error) {
	r.AppID = canonical(r.AppID)
	if !isUUID(r.AppID) {
		return domain.CatalogTaxRate{}, fault.InvalidField("appId", "must be a UUID")
	}
	r.ID, r.CreatedAt = randomID("txr_"), s.now()
	r, err := domain.NewCatalogTaxRate(r)
	if err != nil {
		return domain.CatalogTaxRate{}, err
	}
	return r, s.store.CreateCatalogTaxRate(ctx, r)
}

// Catalog lists an app's catalog.
func (s *Service) Catalog(ctx context.Context, appID string) ([]domain.CatalogPrice, []domain.CatalogTaxRate, error) {
	appID = canonical(appID)
	if !isUUID(appID) {
		return nil, nil, fault.InvalidField("appId", "must be a UUID")
	}
	return s.store.Catalog(ctx, appID)
}
