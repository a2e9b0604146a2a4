package domain

import (
	"strconv"
	"time"
)

// PromoPaymentMethod is the tenant's pspxPaymentMethod after a promotion gave a tenant without a
// paid plan its access.
const PromoPaymentMethod = "berth_promo_code"

// State is a tenant's billing state: what route 5 shows in the billing fields. Times are zero when
// unset and render as "".
type State struct {
	PspxCustomerID                    string
	PspxPriceID                       string
	PspxProductID                     string
	PspxSubscriptionID                string
	PspxTrialingPriceID               string
	PspxTrialingProductID             string
	PspxTrialingSubscriptionID        string
	PspxCheckoutSessionID             string
	PspxDefaultPaymentMethodID        string
	PspxSubscriptionCancelAtPeriodEnd bool
	PspxSubscriptionCancelAt          time.Time
	PspxPaymentMethod                 string
	Mode                              string // "payment", "subscription" or ""
	FreezedDueFailedPayment           bool
	PaidUntil                         time.Time
	FreeUntil                         time.Time
	PaidUnits                         int64
	FreeUnits                         int64
	Freezed                           bool
	PaymentFailed                     bool
	PaymentFailedCount                int32
	PaymentFailedDate                 time.Time
	OneTimePaymentValidThru           time.Time
	// SubscriptionQuantity is the quantity of the paid plan (the subscription's price ×
	// quantity), which plan changes compare against. Billing's own: route 5 has no such field.
	SubscriptionQuantity int64
	// EverPaid records that the tenant has made a payment (units, a subscription or an upgrade),
	// so its first payment is told apart: that one earns the referrer's reward. Billing's own.
	EverPaid bool
	// FailedPayments are the keys of the failed payments counted since the last successful one
	// (see PaymentFailure), so a failure delivered again is not counted twice. Billing's own.
	FailedPayments []string
	// FailedUntil is the end of the latest period a counted failure was to pay: a renewal paying
	// an earlier period, delivered late, does not clear that failure. Billing's own.
	FailedUntil time.Time
	// RenewalsPaid are the tenant's paid renewals, so each is recorded once in whatever order
	// they are delivered, even after its subscription ended. Billing's own.
	RenewalsPaid []Renewal
	// Test is the provider mode of the tenant's latest payment (its subscription's, or its
	// latest units'), which the money events carry. Billing's own.
	Test bool
}

// Renewal is a paid renewal of a subscription, by the provider's ids.
type Renewal struct {
	SubscriptionID string
	InvoiceID      string // the invoice (pspx) or payment (pspy) that paid it
}

// HasPaidPlan reports whether the tenant pays for its access: a subscription or bought units.
func (s State) HasPaidPlan() bool { return s.PspxSubscriptionID != "" || s.PaidUnits > 0 }

// Account is a tenant's billing account. Revision counts its changes: each change that is stored
// increments it, and the tenant context keeps only the newest revision it was sent.
type Account struct {
	AppID     string
	TenantID  string
	Revision  int64
	State     State
	UpdatedAt time.Time
}

// Touch marks a stored change at now.
func (a *Account) Touch(now time.Time) {
	a.Revision++
	a.UpdatedAt = now.UTC()
}

// FormatTime renders a billing time as route 5 does: RFC 3339 UTC, "" when unset.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// FormatUnits renders a unit count as route 5 does: decimal text.
func FormatUnits(n int64) string { return strconv.FormatInt(n, 10) }

// FrozenReason says why a tenant is frozen: "" when it is not, "failedPayments" when its failed
// payments froze it (a payment lifts that), "operator" when an operator did (only an operator
// lifts that).
func (s State) FrozenReason() string {
	switch {
	case !s.Freezed:
		return ""
	case s.FreezedDueFailedPayment:
		return "failedPayments"
	default:
		return "operator"
	}
}
