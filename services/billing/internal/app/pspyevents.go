package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// pspy signs nothing and says nothing but "this payment changed" (route 4 receives id=tr_…), so
// every effect below starts from the payment as the provider shows it now. The same payment id
// returns for each status change, refund and chargeback: effects are keyed by the payment and
// the state observed (its checkout session's status, a renewal's period end, a failure's
// "<payment id>/<status>" key), never by the notification.

// ApplyPspyPayment fetches a pspy payment with the connection's key and applies it: Berth's
// checkout of it settles; a recurring payment of a subscription of a customer Berth created on
// the connection renews the tenant's paid access or counts in its payment-failure lifecycle. An
// unknown connection, or a payment of nothing Berth created (one that neither key finds), is
// ignored; a payment the key may not see, or a subscription the provider refuses once the key
// found its payment (so the key is the account's), is rejected for good.
func (s *Service) ApplyPspyPayment(ctx context.Context, connectionID, paymentID string) (Applied, error) {
	a, err := s.applyPspyPayment(ctx, connectionID, paymentID)
	if pe := refusalOf(err); pe != nil {
		return rejection(pe), nil
	}
	return a, err
}

func (s *Service) applyPspyPayment(ctx context.Context, connectionID, paymentID string) (Applied, error) {
	connectionID = canonical(connectionID)
	if !isUUID(connectionID) || !strings.HasPrefix(paymentID, "tr_") || len(paymentID) > 64 {
		return Applied{Ignored: true}, nil
	}
	conn, err := s.store.Connection(ctx, connectionID)
	if errors.Is(err, domain.ErrConnectionNotFound) || (err == nil && conn.Provider != domain.Pspy) {
		return Applied{Ignored: true}, nil
	}
	if err != nil {
		return Applied{}, err
	}
	// The payment id tells nothing of its mode: ask with the test key first (what sandboxes and
	// apps in development use), then the live key. The provider answers another mode's or
	// another account's payment as not found.
	var (
		p     PspyPayment
		key   string
		found bool
	)
	for _, test := range []bool{true, false} {
		_, key, err = s.connectionKey(ctx, connectionID, test)
		if fault.Is(err, fault.KindPrecondition) {
			continue // no key of that mode
		}
		if err != nil {
			return Applied{}, err
		}
		if p, err = s.pspy.Payment(ctx, key, paymentID); err == nil {
			found = true
			break
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || pe.Status != 404 {
			return Applied{}, providerFault(err, "fetch pspy payment")
		}
	}
	if !found {
		return Applied{Ignored: true}, nil
	}
	cs, own, err := s.ownCheckout(ctx, conn, p.Metadata[metaCheckout], p.ID)
	if err != nil {
		return Applied{}, err
	}
	if !own {
		if p.SubscriptionID != "" {
			return s.pspyRecurringPayment(ctx, conn, key, p)
		}
		return Applied{Ignored: true}, nil
	}
	before := cs.Status
	if cs, err = s.Settle(ctx, cs); err != nil {
		return Applied{}, err
	}
	out := Applied{Effect: changedTo("checkout", before, cs.Status)}
	if p.Status != "paid" {
		out.Status = p.Status
	}
	return out, nil
}

// pspyRecurringPayment applies a payment the provider made for a subscription, once its outcome
// is known:
//   - paid: a renewal, extending paid access to the end of the period it pays, applied only
//     when that extends the tenant's current subscription (State.Renews), so once, and never
//     after a later period was paid;
//   - failed or expired: a failed payment of that period (key "<payment id>/<status>");
//   - paid but charged back: a failed payment of that period too (key "<payment id>/chargeback",
//     domain.PaymentFailure.Reversed); access already extended is not taken back. A refund,
//     which is the merchant's own decision, changes nothing.
//
// A notification for a refund or a chargeback refetches the same payment, still paid: its
// renewal holds already (Renews is false) and a chargeback takes the failure path instead, so
// neither ever applies the renewal, and with it a clearing of the failure flags, again.
func (s *Service) pspyRecurringPayment(ctx context.Context, conn domain.Connection, key string, p PspyPayment) (Applied, error) {
	if _, found, err := s.ownCustomer(ctx, conn, p.CustomerID); err != nil || !found {
		return Applied{Ignored: !found}, err
	}
	switch p.Status {
	case "paid", "failed", "expired":
	default:
		return Applied{Status: p.Status}, nil // open, pending, authorized: the outcome is yet to come
	}
	paysUntil, err := s.pspyPeriodEnd(ctx, key, p)
	if err != nil {
		return Applied{}, err
	}
	failure := domain.PaymentFailure{Key: p.ID + "/" + p.Status, SubscriptionID: p.SubscriptionID, PaysUntil: paysUntil, At: s.now()}
	switch {
	case p.Status == "paid" && p.ChargedBack():
		failure.Key, failure.Reversed = p.ID+"/chargeback", true
	case p.Status == "paid":
		renewal := domain.Renewal{SubscriptionID: p.SubscriptionID, InvoiceID: p.ID}
		return s.onCustomerAccount(ctx, conn, p.CustomerID, "subscription.renewed", pspyCollected(p),
			func(st domain.State) bool { return st.Renews(renewal) },
			func(st *domain.State) { st.Renewed(renewal, paysUntil) })
	}
	out, err := s.paymentFailed(ctx, conn, p.CustomerID, failure)
	if p.Status != "paid" {
		out.Status = p.Status
	}
	return out, err
}

// pspyPeriodEnd is the end of the period a recurring payment pays (or was to pay) for. The
// provider's subscription is charged on its start date and every interval after it, counted from
// the start date; a payment pays until the charge date after its own (its creation date: a
// failed payment has no paidAt). The subscription's nextPaymentDate would say the same only
// while no later payment was made, so a late notification could read a later period off it.
func (s *Service) pspyPeriodEnd(ctx context.Context, key string, p PspyPayment) (time.Time, error) {
	sub, err := s.pspy.Subscription(ctx, key, p.CustomerID, p.SubscriptionID)
	if err != nil {
		return time.Time{}, providerFault(err, "fetch pspy subscription")
	}
	start, err := time.Parse(time.DateOnly, sub.StartDate)
	if err == nil && p.CreatedAt.IsZero() {
		err = errIncomplete("pspy payment " + p.ID + " has no creation date")
	}
	if err != nil {
		return time.Time{}, fault.Internal(fmt.Errorf("pspy subscription %s (start date %q) or its payment %s: %w", sub.ID, sub.StartDate, p.ID, err))
	}
	end, ok := domain.RecurringPeriodEnd(start, sub.Interval, p.CreatedAt)
	if !ok {
		return time.Time{}, fault.Internal(errIncomplete(fmt.Sprintf("pspy subscription %s's interval %q or payment %s's date %v has no period",
			sub.ID, sub.Interval, p.ID, p.CreatedAt)))
	}
	return end, nil
}

// pspyCollected is the payment's amount in minor units with its currency, for the money event that
// records it; the zero Payment when pspy's decimal does not read as the currency's.
func pspyCollected(p PspyPayment) domain.Payment {
	amount, err := domain.ParseMinor(p.Amount.Value, p.Amount.Currency)
	if err != nil {
		return domain.Payment{} // the payment stands; only its amount is not known
	}
	return domain.Payment{Amount: amount, Currency: p.Amount.Currency}
}
