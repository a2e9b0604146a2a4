package domain

import (
	"testing"
	"time"
)

func TestThePaymentFailureLifecycle(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	subscribed := State{PspxSubscriptionID: "sub_1", Mode: ModeSubscription, PaidUntil: now}
	fail := func(key string, paysUntil time.Time) PaymentFailure {
		return PaymentFailure{Key: key, SubscriptionID: "sub_1", PaysUntil: paysUntil, At: now}
	}
	next := now.AddDate(0, 1, 0)
	cases := []struct {
		name      string
		start     State
		failures  []PaymentFailure
		freezeAt  int32
		counted   int32
		frozen    bool
		dueFailed bool
	}{
		{"one failure flags the tenant without freezing it", subscribed, []PaymentFailure{fail("in_1", next)}, 3, 1, false, false},
		{"the same failure seen again counts once", subscribed, []PaymentFailure{fail("in_1", next), fail("in_1", next), fail("in_1", next)}, 3, 1, false, false},
		{"the third failure freezes the tenant for failed payments", subscribed,
			[]PaymentFailure{fail("in_1", next), fail("in_2", next.AddDate(0, 1, 0)), fail("in_3", next.AddDate(0, 2, 0))}, 3, 3, true, true},
		{"the app's threshold decides when to freeze", subscribed, []PaymentFailure{fail("in_1", next)}, 1, 1, true, true},
		{"an operator's freeze stays the operator's", State{PspxSubscriptionID: "sub_1", PaidUntil: now, Freezed: true},
			[]PaymentFailure{fail("in_1", next), fail("in_2", next), fail("in_3", next)}, 3, 3, true, false},
		{"a failure for a period already paid is stale", State{PspxSubscriptionID: "sub_1", PaidUntil: next},
			[]PaymentFailure{fail("in_1", next)}, 3, 0, false, false},
		{"a failure of another subscription is not the tenant's", subscribed,
			[]PaymentFailure{{Key: "in_9", SubscriptionID: "sub_old", PaysUntil: next, At: now}}, 3, 0, false, false},
		{"a tenant without a subscription has nothing to fail", State{PaidUntil: now},
			[]PaymentFailure{fail("in_1", next)}, 3, 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.start
			for _, f := range c.failures {
				if s.FailureCounts(f) {
					s.PaymentFailedFor(f, c.freezeAt)
				}
			}
			if s.PaymentFailedCount != c.counted || s.PaymentFailed != (c.counted > 0) || s.Freezed != c.frozen || s.FreezedDueFailedPayment != c.dueFailed {
				t.Fatalf("state = %+v", s)
			}
			if c.counted > 0 && !s.PaymentFailedDate.Equal(now) {
				t.Fatalf("paymentFailedDate = %v", s.PaymentFailedDate)
			}
		})
	}
}

func TestAPaymentAfterFailuresClearsThemAndOnlyAFreezeForFailedPayments(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name       string
		operator   bool // an operator froze the tenant before the failures
		wantFrozen bool
	}{{"frozen for failed payments: unfrozen", false, false}, {"frozen by an operator: stays frozen", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			s := State{PspxSubscriptionID: "sub_1", PaidUntil: now}
			if c.operator {
				s.FrozenByOperator(true)
			}
			for i, key := range []string{"in_1", "in_2", "in_3"} {
				f := PaymentFailure{Key: key, SubscriptionID: "sub_1", PaysUntil: now.AddDate(0, i+1, 0), At: now}
				s.PaymentFailedFor(f, 3)
			}
			s.Renewed(Renewal{"sub_1", "in_4"}, now.AddDate(0, 3, 0))
			if s.Freezed != c.wantFrozen || s.PaymentFailed || s.PaymentFailedCount != 0 || len(s.FailedPayments) != 0 {
				t.Fatalf("state = %+v", s)
			}
			// The failure the payment covered, delivered late, no longer counts.
			if s.FailureCounts(PaymentFailure{Key: "in_1", SubscriptionID: "sub_1", PaysUntil: now.AddDate(0, 1, 0), At: now}) {
				t.Fatal("a stale failure counts after the payment")
			}
		})
	}
}

func TestAChargedBackRenewalCountsAsAFailedPaymentOnce(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	periodEnd := now.AddDate(0, 1, 0)
	chargeback := PaymentFailure{Key: "tr_1/chargeback", SubscriptionID: "sub_1", PaysUntil: periodEnd, At: now, Reversed: true}
	renewed := State{PspxSubscriptionID: "sub_1", Mode: ModeSubscription, PaidUntil: now}
	renewed.Renewed(Renewal{"sub_1", "tr_1"}, periodEnd)
	cases := []struct {
		name      string
		start     State
		failures  []PaymentFailure
		counted   int32
		paidUntil time.Time
	}{
		{"the renewal it paid was applied: it counts, access stays", renewed, []PaymentFailure{chargeback}, 1, periodEnd},
		{"seen again it counts once", renewed, []PaymentFailure{chargeback, chargeback, chargeback}, 1, periodEnd},
		{"the renewal was never applied: it counts like a failed payment", State{PspxSubscriptionID: "sub_1", PaidUntil: now},
			[]PaymentFailure{chargeback}, 1, now},
		{"after a failed next renewal it counts as one more", renewed,
			[]PaymentFailure{{Key: "tr_2/failed", SubscriptionID: "sub_1", PaysUntil: periodEnd.AddDate(0, 1, 0), At: now}, chargeback}, 2, periodEnd},
		{"a later payment paid beyond its period: stale", State{PspxSubscriptionID: "sub_1", PaidUntil: periodEnd.AddDate(0, 1, 0)},
			[]PaymentFailure{chargeback}, 0, periodEnd.AddDate(0, 1, 0)},
		{"of a subscription the tenant no longer has: nothing", State{PspxSubscriptionID: "sub_2", PaidUntil: periodEnd},
			[]PaymentFailure{chargeback}, 0, periodEnd},
		{"not reversed, a period paid is stale", renewed,
			[]PaymentFailure{{Key: "tr_1/failed", SubscriptionID: "sub_1", PaysUntil: periodEnd, At: now}}, 0, periodEnd},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.start
			for _, f := range c.failures {
				if s.FailureCounts(f) {
					s.PaymentFailedFor(f, 3)
				}
			}
			if s.PaymentFailedCount != c.counted || s.PaymentFailed != (c.counted > 0) || !s.PaidUntil.Equal(c.paidUntil) {
				t.Fatalf("state = %+v", s)
			}
		})
	}
}
