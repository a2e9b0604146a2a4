package domain

// Kinds of money change, named as the events that carry them (billing.<kind>).
const (
	MoneyOneTime               = "payment.one_time"
	MoneySubscriptionStarted   = "subscription.started"
	MoneySubscriptionRenewed   = "subscription.renewed"
	MoneySubscriptionChanged   = "subscription.changed"
	MoneySubscriptionCancelled = "subscription.cancelled"
	MoneySubscriptionEnded     = "subscription.ended"
	MoneyPaymentFailed         = "payment.failed"
	MoneyTenantFrozen          = "tenant.frozen"
	MoneyTenantUnfrozen        = "tenant.unfrozen"
)

// MoneyChange is one way a tenant's money state changed. Units and UnitsBefore are set for a
// one-time payment; Ended is the subscription that ended (its ids as they were); Renewal the
// renewal recorded.
type MoneyChange struct {
	Kind        string
	Units       int64
	UnitsBefore int64
	Ended       State
	Renewal     Renewal
}

// Payment is the payment a change of state records, when it records one: the provider's id of it
// (a pspx checkout session or invoice, a pspy payment), the user who paid ("" when an API key
// started it) and the price paid for.
type Payment struct {
	ID      string
	UserID  string
	PriceID string
	// Amount and Currency are what the provider collected (minor units, the provider's spelling of
	// the ISO 4217 code); 0 and "" when it did not say.
	Amount   int64
	Currency string
}

// For is what a money event of kind says of the payment: a one-time payment names all of it (its
// price is the units', not the subscription's), a started subscription its id, payer and amount,
// a renewal its amount (it names its invoice through Renewal); the other kinds record no payment
// of their own.
func (p Payment) For(kind string) Payment {
	switch kind {
	case MoneyOneTime:
		return p
	case MoneySubscriptionStarted:
		return Payment{ID: p.ID, UserID: p.UserID, Amount: p.Amount, Currency: p.Currency}
	case MoneySubscriptionRenewed:
		return Payment{Amount: p.Amount, Currency: p.Currency}
	}
	return Payment{}
}

// MoneyChanges compares a tenant's billing state before and after one change and names what
// happened to its money, in a fixed order. They are read off the states rather than reported by
// each effect, so no effect (today's or a later one) can change money state without saying so.
func MoneyChanges(before, after State) []MoneyChange {
	var out []MoneyChange
	add := func(kind string, when bool) {
		if when {
			out = append(out, MoneyChange{Kind: kind})
		}
	}
	if after.PaidUnits > before.PaidUnits {
		out = append(out, MoneyChange{Kind: MoneyOneTime, Units: after.PaidUnits - before.PaidUnits, UnitsBefore: before.PaidUnits})
	}
	replaced := before.PspxSubscriptionID != after.PspxSubscriptionID
	if replaced && before.PspxSubscriptionID != "" {
		out = append(out, MoneyChange{Kind: MoneySubscriptionEnded, Ended: before})
	}
	add(MoneySubscriptionStarted, replaced && after.PspxSubscriptionID != "")
	same := !replaced && after.PspxSubscriptionID != ""
	if n := len(after.RenewalsPaid); n > len(before.RenewalsPaid) {
		out = append(out, MoneyChange{Kind: MoneySubscriptionRenewed, Renewal: after.RenewalsPaid[n-1]})
	}
	add(MoneySubscriptionChanged, same && (after.PspxPriceID != before.PspxPriceID || after.PspxProductID != before.PspxProductID ||
		after.SubscriptionQuantity != before.SubscriptionQuantity))
	add(MoneySubscriptionCancelled, same && after.PspxSubscriptionCancelAtPeriodEnd && !before.PspxSubscriptionCancelAtPeriodEnd)
	add(MoneyPaymentFailed, after.PaymentFailedCount > before.PaymentFailedCount)
	add(MoneyTenantFrozen, after.FreezedDueFailedPayment && !before.FreezedDueFailedPayment)
	add(MoneyTenantUnfrozen, before.FreezedDueFailedPayment && !after.FreezedDueFailedPayment && !after.Freezed)
	return out
}
