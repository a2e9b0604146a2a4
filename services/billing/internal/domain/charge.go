package domain

import (
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// Charge kinds: what Berth asked the provider to charge outside a hosted checkout.
const (
	ChargeInvoice      = "invoice"      // route 13, mode payment: an invoice charged now
	ChargeSubscription = "subscription" // route 13, mode subscription: a subscription charged automatically
	ChargeUpgrade      = "upgrade"      // route 19: the invoice that pays for an upgrade
)

// Charge statuses. A charge is open until its invoice is paid (completed: its effect applied) or
// can no longer be (failed: declined, voided or uncollectible; nothing applied).
const (
	ChargeOpen      = "open"
	ChargeCompleted = "completed"
	ChargeFailed    = "failed"
)

// Charge is Berth's record of a charge it started at the provider on a tenant's default payment
// method. Its status moves once, in the same transaction as the account change it causes, so the
// route that started it and the provider's events (later) apply its effect exactly once.
type Charge struct {
	ID             string
	AppID          string
	TenantID       string
	ConnectionID   string
	Test           bool
	Kind           string
	CustomerID     string
	UserID         string // route 13's userId: who pays
	Price          string
	TaxRate        string
	Quantity       int64
	FromPrice      string // upgrade: the plan it replaces
	FromQuantity   int64  // upgrade
	Amount         int64  // upgrade: the difference invoiced, minor units before tax, fixed when it opens
	SubscriptionID string // upgrade: the subscription changed; subscription: the one created
	InvoiceID      string // the provider invoice; "" until it exists
	Status         string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Settled reports whether the charge's outcome is final.
func (c Charge) Settled() bool { return c.Status != ChargeOpen }

// maxFooter bounds an invoice footer (the provider's own limit).
const maxFooter = 5000

// InvoiceRequest is route 13's body.
type InvoiceRequest struct {
	Price    string
	TaxRate  string
	Mode     string // "payment" or "subscription"
	Quantity int64
	TenantID string // optional; when sent, the path's tenant
	UserID   string // optional; when sent, a user of the tenant
	Test     bool
	Footer   string
}

// Validate checks route 13's body.
func (r InvoiceRequest) Validate() error {
	if r.Mode != ModePayment && r.Mode != ModeSubscription {
		return fault.InvalidField("mode", "must be payment or subscription")
	}
	if len([]rune(r.Footer)) > maxFooter {
		return fault.InvalidField("footer", "must be at most %d characters", maxFooter)
	}
	return validateLine(r.Price, r.TaxRate, r.Quantity)
}

// PlanRequest is route 19's body: the plan the subscription should have.
type PlanRequest struct {
	Price    string
	TaxRate  string
	Quantity int64
	TenantID string // optional; when sent, the path's tenant
	UserID   string // optional; when sent, a user of the tenant
	Test     bool
}

// Validate checks route 19's body.
func (r PlanRequest) Validate() error { return validateLine(r.Price, r.TaxRate, r.Quantity) }

// validateLine checks what every priced line needs: a price id, an optional tax rate id and a
// whole quantity of 1 to 10000.
func validateLine(price, taxRate string, quantity int64) error {
	switch {
	case !providerIDShape.MatchString(price):
		return fault.InvalidField("price", "must be a price id")
	case taxRate != "" && !providerIDShape.MatchString(taxRate):
		return fault.InvalidField("taxRate", "must be a tax rate id")
	case quantity < 1 || quantity > maxQuantity:
		return fault.InvalidField("quantity", "must be a whole number between 1 and %d", maxQuantity)
	}
	return nil
}

// maxQuantity bounds a line's quantity.
const maxQuantity = 10_000

// CheckProviderID checks a provider object id sent by a caller (a cursor, a price).
func CheckProviderID(field, id string) error {
	if !providerIDShape.MatchString(id) {
		return fault.InvalidField(field, "must be a provider id")
	}
	return nil
}

// Plan is a subscription's terms: what one period costs.
type Plan struct {
	UnitAmount int64 // minor units per unit and period
	Quantity   int64
}

// Amount is what one period of the plan costs, in minor units.
func (p Plan) Amount() int64 { return p.UnitAmount * p.Quantity }

// Upgrades reports whether next costs more per period than p, the plan in force: an upgrade is
// invoiced and paid before it applies, anything else takes effect at the end of the paid period.
func (p Plan) Upgrades(next Plan) bool { return next.Amount() > p.Amount() }

// UpgradeCharge is what an upgrade from old to next costs for the rest of the period that runs
// from start to end, at now: the difference of the two plans' amounts for the time left, rounded
// to the nearest minor unit; 0 when no time is left.
func UpgradeCharge(old, next Plan, start, end, now time.Time) int64 {
	diff := next.Amount() - old.Amount()
	whole, left := end.Sub(start)/time.Second, min(end.Sub(now), end.Sub(start))/time.Second
	if diff <= 0 || whole <= 0 || left <= 0 {
		return 0
	}
	// Whole seconds keep the product far from overflow: amounts below 2^40 times periods below
	// 2^23 s (97 days) or 2^25 s (a year).
	return (diff*int64(left) + int64(whole)/2) / int64(whole)
}
