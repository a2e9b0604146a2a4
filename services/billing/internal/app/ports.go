package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Billing's storage ports, one per aggregate: connections, app settings, the pspy catalog,
// promotions (with their redemptions and referral rewards), tenants' accounts, provider customers,
// checkout sessions and charges. Every adapter implements all of them over one database (or one
// lock), so a write that spans two aggregates is one transaction.
//
// Update and settle methods run fn on copies of the rows they name, locked against concurrent
// writers (Postgres: one transaction with the rows locked; memory: under the store's lock), and
// store nothing when fn fails. A tenant's account is the aggregate most writes meet: a method that
// changes an account with another aggregate locks the other one first, then the account (the order
// every writer keeps, so two never wait for each other), and commits both, fn's events and any
// once-only record of the use (a redemption, a reward, a settled session or charge) in that one
// transaction: an effect is applied exactly once, with the record that it was.

// Connections stores the apps' provider connections with their sealed keys and webhook secrets.
type Connections interface {
	CreateConnection(ctx context.Context, c domain.Connection) error
	// Connection returns a connection by id; domain.ErrConnectionNotFound when absent.
	Connection(ctx context.Context, id string) (domain.Connection, error)
	// Connections lists an app's connections, oldest first.
	Connections(ctx context.Context, appID string) ([]domain.Connection, error)
	// UpdateConnection runs fn on a copy of the connection, locked against concurrent updates,
	// and stores the copy when fn succeeds.
	UpdateConnection(ctx context.Context, id string, fn func(*domain.Connection) error) (domain.Connection, error)
}

// Settings stores each app's billing settings.
type Settings interface {
	// Settings returns an app's settings, domain.DefaultSettings when none are stored.
	Settings(ctx context.Context, appID string) (domain.Settings, error)
	// UpdateSettings runs fn on the app's settings (the defaults when none are stored), locked,
	// and stores them when fn succeeds.
	UpdateSettings(ctx context.Context, appID string, fn func(*domain.Settings) error) (domain.Settings, error)
}

// Catalog stores the pspy catalog: the prices and tax rates Berth keeps for that provider.
type Catalog interface {
	CreateCatalogPrice(ctx context.Context, p domain.CatalogPrice) error
	CreateCatalogTaxRate(ctx context.Context, r domain.CatalogTaxRate) error
	// Catalog lists an app's prices and tax rates, oldest first.
	Catalog(ctx context.Context, appID string) ([]domain.CatalogPrice, []domain.CatalogTaxRate, error)
}

// Promotions stores promotions and the once-only records of their uses: a tenant's redemption of
// a code, a referred tenant's reward to its referrer. A use changes the promotion and a tenant's
// account together.
type Promotions interface {
	// CreatePromotion stores a promotion; domain.ErrCodeTaken when the app has its code.
	CreatePromotion(ctx context.Context, p domain.Promotion) error
	// Promotions lists an app's promotions, oldest first.
	Promotions(ctx context.Context, appID string) ([]domain.Promotion, error)
	// UpdatePromotion runs fn on the app's promotion, locked; domain.ErrPromotionNotFound.
	UpdatePromotion(ctx context.Context, appID, id string, fn func(*domain.Promotion) error) (domain.Promotion, error)
	// Redeem runs fn on the app's promotion with that (canonical) code and the tenant's account,
	// both locked, and stores both, the redemption and fn's events together. It answers
	// domain.ErrUnknownCode, without calling fn, when the app has no such code or the tenant has
	// redeemed it before; concurrent redemptions of one promotion are serialised, so its
	// redemption count and maximum hold.
	Redeem(ctx context.Context, r Redemption, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error)
	// GrantReferralReward runs fn on the app's promotion g names and the referrer's account, both
	// locked, and stores both, the reward record and fn's events together. It answers
	// domain.ErrReferralRewarded, without calling fn, when the referred tenant earned its reward
	// before, and domain.ErrPromotionNotFound when the app has no such promotion.
	GrantReferralReward(ctx context.Context, g ReferralGrant, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error)
	// PromotionUses lists the uses (redemptions and referral rewards) of the app's promotion,
	// newest first, at most limit, starting after the cursor (nil: at the newest). Another app's
	// promotion has none.
	PromotionUses(ctx context.Context, appID, promotionID string, after *domain.UseCursor, limit int) ([]domain.PromotionUse, error)
	// TenantPromotionUses lists what the app's tenant received: its redemptions and the referral
	// rewards granted to it, newest first, at most limit.
	TenantPromotionUses(ctx context.Context, appID, tenantID string, limit int) ([]domain.PromotionUse, error)
}

// Accounts stores every tenant's billing account: the state billing decides, whose every change
// commits with its events.
type Accounts interface {
	// Account returns a tenant's billing account; a tenant billing never touched has the zero
	// account (revision 0) of that app and tenant.
	Account(ctx context.Context, appID, tenantID string) (domain.Account, error)
	// UpdateAccount runs fn on the tenant's account, locked, and stores it with fn's events in
	// one transaction.
	UpdateAccount(ctx context.Context, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error)
}

// Customers stores the provider customers Berth created for tenants, one per connection, tenant
// and mode.
type Customers interface {
	// SaveCustomer stores c unless its connection, tenant and mode have a customer already, and
	// returns the stored one: two checkouts racing to create a tenant's customer keep one.
	SaveCustomer(ctx context.Context, c domain.Customer) (domain.Customer, error)
	// Customer returns the tenant's customer on a connection and mode; domain.ErrCustomerNotFound.
	Customer(ctx context.Context, connectionID, tenantID string, test bool) (domain.Customer, error)
	// CustomerByProviderID returns the customer with the provider's id (a provider event names
	// it); domain.ErrCustomerNotFound when Berth created no such customer.
	CustomerByProviderID(ctx context.Context, providerCustomerID string) (domain.Customer, error)
}

// Checkouts stores checkout sessions; settling one changes its tenant's account.
type Checkouts interface {
	CreateCheckout(ctx context.Context, c domain.CheckoutSession) error
	// Checkout returns a checkout session; domain.ErrCheckoutNotFound when absent.
	Checkout(ctx context.Context, id string) (domain.CheckoutSession, error)
	// SettleCheckout runs fn on the session and its tenant's account, both locked, and stores
	// both with fn's events in one transaction: a session's effect and the record that it was
	// applied commit together, so it applies once however often the payer returns.
	SettleCheckout(ctx context.Context, id string, fn func(*domain.CheckoutSession, *domain.Account) ([]events.Event, error)) (domain.CheckoutSession, domain.Account, error)
	// TenantCheckouts lists the app's tenant's checkout sessions, newest first, at most limit.
	TenantCheckouts(ctx context.Context, appID, tenantID string, limit int) ([]domain.CheckoutSession, error)
}

// Charges stores the charges Berth starts at a provider outside a hosted checkout (route 13's
// invoices and subscriptions, route 19's upgrades); settling one changes its tenant's account.
type Charges interface {
	// CreateCharge stores a new open charge. An upgrade whose subscription has an open upgrade
	// already is refused with domain.ErrChargePending, so racing plan changes invoice once; a
	// subscription charge of a tenant with one open, with domain.ErrSubscriptionPending.
	CreateCharge(ctx context.Context, c domain.Charge) error
	// Charge returns a charge; domain.ErrChargeNotFound when absent.
	Charge(ctx context.Context, id string) (domain.Charge, error)
	// OpenUpgrade returns the subscription's open upgrade; domain.ErrChargeNotFound when none.
	OpenUpgrade(ctx context.Context, subscriptionID string) (domain.Charge, error)
	// SettleCharge runs fn on the charge and its tenant's account, both locked, and stores both
	// with fn's events in one transaction, as SettleCheckout does for sessions.
	SettleCharge(ctx context.Context, id string, fn func(*domain.Charge, *domain.Account) ([]events.Event, error)) (domain.Charge, domain.Account, error)
	// TenantCharges lists the app's tenant's charges, newest first, at most limit.
	TenantCharges(ctx context.Context, appID, tenantID string, limit int) ([]domain.Charge, error)
}

// Store is every storage port the billing use cases need.
type Store interface {
	Connections
	Settings
	Catalog
	Promotions
	Accounts
	Customers
	Checkouts
	Charges
}

// Redemption names who redeems which code.
type Redemption struct {
	AppID    string
	Code     string // canonical (domain.CanonicalCode)
	TenantID string
	UserID   string
	At       time.Time
}

// ReferralGrant names the reward one referred tenant's first payment earns its referrer.
type ReferralGrant struct {
	AppID            string
	PromotionID      string
	ReferredTenantID string
	ReferrerTenantID string
	ReferrerUserID   string
	At               time.Time
}

// Users is identity's view of the users routes name.
type Users interface {
	// User returns the app's live user; a fault of kind NotFound when absent, another app's or
	// deleted.
	User(ctx context.Context, appID, userID string) (UserRef, error)
	// App returns an enabled app; a fault of kind NotFound when absent or disabled.
	App(ctx context.Context, appID string) (AppRef, error)
	// TenantReferrer returns the live user whose invite brought the tenant's first referred user;
	// a fault of kind NotFound when nobody referred the tenant or the referrer is deleted.
	TenantReferrer(ctx context.Context, appID, tenantID string) (UserRef, error)
}

// AppRef is what billing needs of an app.
type AppRef struct {
	ID               string
	Name             string
	FirstRedirectURI string // "" when the app registered none
}

// UserRef is what billing needs of a user.
type UserRef struct {
	ID       string
	TenantID string // "" when the user has no tenant
	Email    string
}

// Tenants receives the billing state billing decides, so route 5 (served by the tenant context)
// shows it. Apply is idempotent by revision.
type Tenants interface {
	Apply(ctx context.Context, a domain.Account) error
	// Tenant returns the app's live tenant; a fault of kind NotFound when absent, another app's
	// or deleted.
	Tenant(ctx context.Context, appID, tenantID string) (TenantRef, error)
}

// TenantRef is what billing needs of a tenant.
type TenantRef struct {
	ID          string
	Name        string
	CompanyName string
}
