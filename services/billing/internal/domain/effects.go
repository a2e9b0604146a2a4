package domain

import (
	"slices"
	"time"
)

// The effects below are what a paid checkout (and, later, a provider's event) does to a tenant's
// billing state. They are pure: the app layer decides when one applies (exactly once, in the same
// transaction as the record that it did) and these say what it changes.

// Subscription is a paid subscription as billing records it, in either provider's ids (pspy's
// subscription, customer and mandate ids go to the pspx* fields, as decided).
type Subscription struct {
	CustomerID        string
	ID                string
	PriceID           string
	ProductID         string
	Quantity          int64
	CheckoutSessionID string
	PaymentMethod     string // "card" or "sepa"; "" (a subscription charged off-session) leaves it
	DefaultMethodID   string // the payment method or mandate that renews it; "" = unchanged
	PaidUntil         time.Time
	Test              bool // the provider mode it was paid in
}

// Subscribed records a paid subscription: the tenant's mode becomes subscription, its plan the
// subscription's price and product, its access paid until the end of the paid period. A pending
// cancellation of an earlier subscription is void, and a payment clears failure flags.
func (s *State) Subscribed(sub Subscription) {
	s.PspxCustomerID = sub.CustomerID
	s.PspxSubscriptionID = sub.ID
	s.PspxPriceID = sub.PriceID
	s.PspxProductID = sub.ProductID
	s.SubscriptionQuantity = sub.Quantity
	if sub.CheckoutSessionID != "" {
		s.PspxCheckoutSessionID = sub.CheckoutSessionID
	}
	if sub.PaymentMethod != "" {
		s.PspxPaymentMethod = sub.PaymentMethod
	}
	if sub.DefaultMethodID != "" {
		s.PspxDefaultPaymentMethodID = sub.DefaultMethodID
	}
	s.Mode = ModeSubscription
	s.Test = sub.Test
	s.PspxSubscriptionCancelAtPeriodEnd = false
	s.PspxSubscriptionCancelAt = time.Time{}
	s.extendPaidUntil(sub.PaidUntil)
	s.paymentSucceeded()
}

// UnitsBought records a one-time payment of units, valid until validThru. A tenant with a
// subscription keeps mode subscription: its units come on top. sessionID and paymentMethod are
// "" for a charge made without a checkout (route 13), which leaves those fields as they are;
// test is the provider mode it was paid in.
func (s *State) UnitsBought(customerID, sessionID, paymentMethod string, units int64, validThru time.Time, test bool) {
	s.PspxCustomerID = customerID
	s.Test = test
	if sessionID != "" {
		s.PspxCheckoutSessionID = sessionID
	}
	s.PaidUnits += units
	if validThru.After(s.OneTimePaymentValidThru) {
		s.OneTimePaymentValidThru = validThru.UTC()
	}
	if s.Mode != ModeSubscription {
		s.Mode = ModePayment
		if paymentMethod != "" {
			s.PspxPaymentMethod = paymentMethod
		}
	}
	s.paymentSucceeded()
}

// PaymentMethodSetUp records a payment method (pspx) or mandate (pspy) as the tenant's default.
func (s *State) PaymentMethodSetUp(customerID, sessionID, methodID string) {
	s.PspxCustomerID = customerID
	s.PspxCheckoutSessionID = sessionID
	s.PspxDefaultPaymentMethodID = methodID
}

// PlanChanged records a paid upgrade: the subscription's plan is now price × quantity of product.
// Its invoice was paid, which clears failure flags like any payment.
func (s *State) PlanChanged(priceID, productID string, quantity int64) {
	s.PspxPriceID = priceID
	s.PspxProductID = productID
	s.SubscriptionQuantity = quantity
	s.paymentSucceeded()
}

// Renews reports whether a paid renewal of one of the tenant's subscriptions is news: it was not
// recorded yet. Renewals delivered late, out of order, again, or after their subscription ended
// are each recorded once, so any delivery order ends in the state in-order delivery gives.
func (s State) Renews(r Renewal) bool {
	return r.SubscriptionID != "" && r.InvoiceID != "" && !slices.Contains(s.RenewalsPaid, r)
}

// Renewed records a paid renewal (see Renews) that pays until paidUntil: paid access never
// shrinks, and the payment clears failure flags unless a counted failure was for a later period
// (a renewal delivered late never clears a newer failure).
func (s *State) Renewed(r Renewal, paidUntil time.Time) {
	s.RenewalsPaid = append(s.RenewalsPaid, r)
	s.extendPaidUntil(paidUntil)
	if paidUntil.Before(s.FailedUntil) {
		s.EverPaid = true
		return
	}
	s.paymentSucceeded()
}

// SubscriptionEnded records that the provider ended the tenant's subscription (at the end of a
// period it was cancelled for, or after its first payment never came). Access already paid for
// stays until paidUntil; the plan, the subscription and its cancellation fields go. A tenant
// with units bought keeps mode payment.
func (s *State) SubscriptionEnded() {
	s.PspxSubscriptionID, s.PspxPriceID, s.PspxProductID, s.SubscriptionQuantity = "", "", "", 0
	s.PspxSubscriptionCancelAtPeriodEnd, s.PspxSubscriptionCancelAt = false, time.Time{}
	s.Mode = ""
	if s.PaidUnits > 0 {
		s.Mode = ModePayment
	}
}

// CancelsAtPeriodEnd records that the subscription ends at at, the end of its paid period.
func (s *State) CancelsAtPeriodEnd(at time.Time) {
	s.PspxSubscriptionCancelAtPeriodEnd = true
	s.PspxSubscriptionCancelAt = at.UTC()
}

// PaymentMethodsDeleted records that the tenant has no payment method left at the provider.
func (s *State) PaymentMethodsDeleted() { s.PspxDefaultPaymentMethodID = "" }

// extendPaidUntil never shortens paid access: a late or replayed period end cannot take back time
// already paid for.
func (s *State) extendPaidUntil(t time.Time) {
	if t.After(s.PaidUntil) {
		s.PaidUntil = t.UTC()
	}
}

// PaymentFailure is a failed payment of a subscription that the failure lifecycle counts: a
// renewal invoice the provider gave up on (pspx), a failed or expired recurring payment, or a
// recurring payment charged back (pspy).
type PaymentFailure struct {
	// Key names the failure in the provider's ids (the invoice, or the payment and its observed
	// state): the same failure seen again is counted once.
	Key            string
	SubscriptionID string
	// PaysUntil is the end of the period the payment was to pay for.
	PaysUntil time.Time
	At        time.Time
	// Reversed marks a payment that was paid and then taken back by the payer's bank (a
	// chargeback). Its renewal may have extended paidUntil to PaysUntil already, so it still
	// counts while paidUntil is PaysUntil; a later payment that paid beyond its period makes it
	// stale like any other failure.
	Reversed bool
}

// FailureCounts reports whether f is a new failure of the tenant's current subscription for a
// period not paid yet (or, reversed, paid only by the payment taken back). A failure delivered
// late (after a payment covered its period), for a subscription the tenant no longer has, or
// again, changes nothing: stale news never overwrites newer state.
func (s State) FailureCounts(f PaymentFailure) bool {
	unpaid := f.PaysUntil.After(s.PaidUntil) || f.Reversed && f.PaysUntil.Equal(s.PaidUntil)
	return f.Key != "" && f.SubscriptionID != "" && s.PspxSubscriptionID == f.SubscriptionID &&
		unpaid && !slices.Contains(s.FailedPayments, f.Key)
}

// PaymentFailedFor records a counted failure (see FailureCounts): the tenant's payment failed,
// one more time, at f.At. At freezeAt failures a tenant is frozen for failed payments, unless it
// is frozen already for another reason: then it stays frozen for that reason alone, so a later
// payment does not lift an operator's freeze.
func (s *State) PaymentFailedFor(f PaymentFailure, freezeAt int32) {
	s.FailedPayments = append(s.FailedPayments, f.Key)
	s.PaymentFailed = true
	s.PaymentFailedCount++
	if f.At.After(s.PaymentFailedDate) {
		s.PaymentFailedDate = f.At.UTC()
	}
	if f.PaysUntil.After(s.FailedUntil) {
		s.FailedUntil = f.PaysUntil.UTC()
	}
	if s.PaymentFailedCount >= freezeAt && !s.Freezed {
		s.Freezed = true
		s.FreezedDueFailedPayment = true
	}
}

// FrozenByOperator records an operator's decision: frozen, the tenant stays frozen whatever it
// pays; unfrozen, it is unfrozen whatever froze it. Failure counts are left as they are.
func (s *State) FrozenByOperator(frozen bool) {
	s.Freezed = frozen
	s.FreezedDueFailedPayment = false
}

// paymentSucceeded records a payment: the tenant has paid, its failure flags clear, and a tenant
// frozen for failed payments is unfrozen, only for that reason: a tenant frozen otherwise stays
// frozen.
func (s *State) paymentSucceeded() {
	s.EverPaid = true
	if s.FreezedDueFailedPayment {
		s.Freezed = false
		s.FreezedDueFailedPayment = false
	}
	s.PaymentFailed = false
	s.PaymentFailedCount = 0
	s.PaymentFailedDate = time.Time{}
	s.FailedPayments = nil
	s.FailedUntil = time.Time{}
}
