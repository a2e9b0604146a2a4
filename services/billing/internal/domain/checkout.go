package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"regexp"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// Checkout modes of route 10.
const (
	ModePayment      = "payment"
	ModeSubscription = "subscription"
	ModeSetup        = "setup"
)

// CheckoutRequest is route 10's body.
type CheckoutRequest struct {
	Price                    string
	TaxRate                  string
	AllowedCountry           string
	PaymentMethodType        string // "card" or "sepa"
	BillingAddressCollection bool
	Mode                     string
	Quantity                 int64
	IsReverseCharge          bool
	State                    string
	Test                     bool
}

var (
	statePattern    = regexp.MustCompile(`^[A-Za-z0-9._-]{64}$`)
	countryPattern  = regexp.MustCompile(`^[A-Z]{2}$`)
	providerIDShape = regexp.MustCompile(`^[A-Za-z0-9_]{1,255}$`)
)

// Validate checks the body as decided: the state's form, the mode, a positive quantity, an
// upper-case country code, card or SEPA (sofort is discontinued by the provider and refused), and
// a price for every mode but setup.
func (r CheckoutRequest) Validate() error {
	switch {
	case !statePattern.MatchString(r.State):
		return fault.InvalidField("state", "must be exactly 64 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
	case r.Mode != ModePayment && r.Mode != ModeSubscription && r.Mode != ModeSetup:
		return fault.InvalidField("mode", "must be payment, subscription or setup")
	case r.Mode != ModeSetup && (r.Quantity < 1 || r.Quantity > maxQuantity):
		return fault.InvalidField("quantity", "must be a whole number between 1 and %d", maxQuantity)
	case r.Mode == ModeSetup && r.Quantity < 0:
		return fault.InvalidField("quantity", "must not be negative")
	case r.AllowedCountry != "" && !countryPattern.MatchString(r.AllowedCountry):
		return fault.InvalidField("allowedCountry", "must be an upper-case ISO 3166-1 alpha-2 code")
	case r.PaymentMethodType == "sofort":
		return fault.InvalidField("paymentMethodType", "sofort is no longer offered by the provider; use card or sepa")
	case r.PaymentMethodType != "card" && r.PaymentMethodType != "sepa":
		return fault.InvalidField("paymentMethodType", "must be card or sepa")
	case r.Mode != ModeSetup && !providerIDShape.MatchString(r.Price):
		return fault.InvalidField("price", "must be a price id")
	case r.Price != "" && !providerIDShape.MatchString(r.Price):
		return fault.InvalidField("price", "must be a price id")
	case r.TaxRate != "" && !providerIDShape.MatchString(r.TaxRate):
		return fault.InvalidField("taxRate", "must be a tax rate id")
	}
	return nil
}

// Checkout statuses: open until the payer finishes at the provider; then completed (the effect
// is applied), pending (paid asynchronously, e.g. SEPA: the webhook applies it later), or failed.
const (
	CheckoutOpen      = "open"
	CheckoutCompleted = "completed"
	CheckoutPending   = "pending"
	CheckoutFailed    = "failed"
	CheckoutCancelled = "cancelled"
)

// CheckoutSession is Berth's own record of a checkout: what route 10 answered and what the
// provider made of it. Hash and the state's hash let the hosted payment page check the link it
// is opened with; the state itself is the app's secret and is never stored.
type CheckoutSession struct {
	ID                string
	AppID             string
	TenantID          string
	ConnectionID      string
	Provider          Provider
	Test              bool
	Mode              string
	Price             string
	TaxRate           string
	Quantity          int64
	Method            string // "card" or "sepa": how the payer pays
	CustomerID        string // the provider customer paying
	UserID            string // the user whose tenant access token created it; "" for an API key
	Hash              string // 64 hex digits, random
	StateHash         string // hex SHA-256 of the caller's state
	ProviderSessionID string // pspx checkout session id or pspy payment id
	ProviderURL       string // the provider's hosted page
	Status            string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// HashState is how a state is kept: its SHA-256, hex.
func HashState(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}

// Opens reports, in constant time, whether hash and state are the ones the session was created
// with (the hosted payment page's check). Both comparisons always run.
func (c CheckoutSession) Opens(hash, state string) bool {
	return subtle.ConstantTimeCompare([]byte(hash), []byte(c.Hash))&c.stateMatch(state) == 1
}

// HoldsState reports, in constant time, whether state is the one the session was created with.
func (c CheckoutSession) HoldsState(state string) bool { return c.stateMatch(state) == 1 }

func (c CheckoutSession) stateMatch(state string) int {
	return subtle.ConstantTimeCompare([]byte(HashState(state)), []byte(c.StateHash))
}

// Settled reports whether the session's outcome is final: its effect applied (or refused) once,
// so later returns and events change nothing.
func (c CheckoutSession) Settled() bool {
	return c.Status == CheckoutCompleted || c.Status == CheckoutFailed || c.Status == CheckoutCancelled
}

// Customer is the provider customer Berth created for a tenant on one connection and mode. Every
// customer Berth acts on is one of these, which is how a provider's event finds its tenant.
type Customer struct {
	ID           string // the provider's customer id
	ConnectionID string
	AppID        string
	TenantID     string
	Test         bool
	CreatedAt    time.Time
}
