package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// changeState applies an effect to an account its store transaction holds locked: the account
// moves to its next revision and the billing.tenant.changed event, committed with it, says why.
// The money events (domain.MoneyChanges) commit with it too, and the effect that records the
// tenant's first payment also emits billing.tenant.first_paid, so the referral reward it earns is
// owed exactly once.
func changeState(a *domain.Account, now time.Time, reason string, pay domain.Payment, apply func(*domain.State)) ([]events.Event, error) {
	before := a.State
	apply(&a.State)
	a.Touch(now)
	ev, err := stateEvent(*a, reason)
	if err != nil {
		return nil, err
	}
	out := []events.Event{ev}
	for _, m := range domain.MoneyChanges(before, a.State) {
		ev, err := moneyEvent(*a, now, reason, m, pay.For(m.Kind))
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	if before.EverPaid || !a.State.EverPaid {
		return out, nil
	}
	first, err := events.New(Source, billingv1.EventTenantFirstPaid, a.AppID, &billingv1.TenantFirstPaid{
		AppId: a.AppID, TenantId: a.TenantID, Reason: reason, At: domain.FormatTime(now),
	})
	if err != nil {
		return nil, err
	}
	return append(out, first), nil
}

// moneyEventTypes maps each kind of money change to its event type.
var moneyEventTypes = map[string]eventsv1.Type{
	domain.MoneyOneTime:               billingv1.EventPaymentOneTime,
	domain.MoneySubscriptionStarted:   billingv1.EventSubscriptionStarted,
	domain.MoneySubscriptionRenewed:   billingv1.EventSubscriptionRenewed,
	domain.MoneySubscriptionChanged:   billingv1.EventSubscriptionChanged,
	domain.MoneySubscriptionCancelled: billingv1.EventSubscriptionCancelled,
	domain.MoneySubscriptionEnded:     billingv1.EventSubscriptionEnded,
	domain.MoneyPaymentFailed:         billingv1.EventPaymentFailed,
	domain.MoneyTenantFrozen:          billingv1.EventTenantFrozen,
	domain.MoneyTenantUnfrozen:        billingv1.EventTenantUnfrozen,
}

// moneyEvent is the event of one money change of the account, with its state after the change
// (for an ended subscription, the ids it had; for a renewal of one, its id) and the payment it
// records, if any.
func moneyEvent(a domain.Account, now time.Time, reason string, m domain.MoneyChange, pay domain.Payment) (events.Event, error) {
	st, sub := a.State, a.State
	switch m.Kind {
	case domain.MoneySubscriptionEnded:
		sub = m.Ended
	case domain.MoneySubscriptionRenewed:
		if m.Renewal.SubscriptionID != sub.PspxSubscriptionID { // a renewal of a subscription that ended since
			sub = domain.State{PspxSubscriptionID: m.Renewal.SubscriptionID}
		}
	}
	priceID, paymentID := sub.PspxPriceID, m.Renewal.InvoiceID
	if pay.PriceID != "" {
		priceID = pay.PriceID
	}
	if pay.ID != "" {
		paymentID = pay.ID
	}
	return events.New(Source, moneyEventTypes[m.Kind], a.AppID, &billingv1.MoneyChanged{
		AppId: a.AppID, TenantId: a.TenantID, Revision: a.Revision, Reason: reason, At: domain.FormatTime(now), Test: st.Test,
		CustomerId: st.PspxCustomerID, SubscriptionId: sub.PspxSubscriptionID, PriceId: priceID, ProductId: sub.PspxProductID,
		Quantity: sub.SubscriptionQuantity, CheckoutSessionId: st.PspxCheckoutSessionID, PaidUntil: domain.FormatTime(st.PaidUntil),
		Units: m.Units, UnitsBefore: m.UnitsBefore, PaymentFailedCount: st.PaymentFailedCount, PaymentId: paymentID, UserId: pay.UserID,
		Amount: pay.Amount, Currency: pay.Currency,
	})
}

// updateAccount applies an effect to a tenant's account unless needed reports, on the locked
// account, that it holds already (a repeated request or event changes nothing and emits nothing),
// and hands a changed account to the tenant context before answering. pay is the payment the
// effect records (a renewal's amount), the zero Payment for none. It reports whether the account
// changed.
func (s *Service) updateAccount(ctx context.Context, appID, tenantID, reason string, pay domain.Payment, needed func(domain.State) bool, apply func(*domain.State)) (bool, error) {
	changed := false
	acct, err := s.store.UpdateAccount(ctx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) {
		if !needed(a.State) {
			return nil, nil
		}
		changed = true
		return changeState(a, s.now(), reason, pay, apply)
	})
	if err != nil || !changed {
		return false, err
	}
	return true, s.publish(ctx, acct)
}

// SetTenantFrozen is an operator's freeze or unfreeze of an app's live tenant (see
// domain.State.FrozenByOperator). Setting what holds already changes nothing.
func (s *Service) SetTenantFrozen(ctx context.Context, appID, tenantID string, frozen bool) error {
	appID, tenantID = canonical(appID), canonical(tenantID)
	if _, err := s.tenants.Tenant(ctx, appID, tenantID); err != nil {
		return err
	}
	reason := map[bool]string{true: "operator.frozen", false: "operator.unfrozen"}[frozen]
	_, err := s.updateAccount(ctx, appID, tenantID, reason, domain.Payment{},
		func(st domain.State) bool { return st.Freezed != frozen || st.FreezedDueFailedPayment },
		func(st *domain.State) { st.FrozenByOperator(frozen) })
	return err
}
