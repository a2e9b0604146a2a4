package domain

import (
	"testing"
	"time"
)

func TestPaidEffectsOnTheTenantsBillingState(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	failed := State{PaymentFailed: true, PaymentFailedCount: 3, PaymentFailedDate: now, Freezed: true, FreezedDueFailedPayment: true}
	frozenByOperator := State{Freezed: true}
	cases := []struct {
		name  string
		start State
		apply func(*State)
		check func(t *testing.T, s State)
	}{
		{"a subscription sets mode, plan and paid period", State{PspxSubscriptionCancelAtPeriodEnd: true, PspxSubscriptionCancelAt: now},
			func(s *State) {
				s.Subscribed(Subscription{CustomerID: "cus_1", ID: "sub_1", PriceID: "price_m", ProductID: "prod_1", CheckoutSessionID: "cs_1", PaymentMethod: "card", DefaultMethodID: "pm_1", PaidUntil: now.AddDate(0, 1, 0)})
			},
			func(t *testing.T, s State) {
				if s.Mode != ModeSubscription || s.PspxSubscriptionID != "sub_1" || s.PspxPriceID != "price_m" || s.PspxProductID != "prod_1" ||
					s.PspxCustomerID != "cus_1" || s.PspxDefaultPaymentMethodID != "pm_1" || !s.PaidUntil.Equal(now.AddDate(0, 1, 0)) ||
					s.PspxSubscriptionCancelAtPeriodEnd || !s.PspxSubscriptionCancelAt.IsZero() || !s.HasPaidPlan() {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a replayed older period never shortens paid access", State{PaidUntil: now.AddDate(0, 2, 0)},
			func(s *State) { s.Subscribed(Subscription{ID: "sub_1", PaidUntil: now.AddDate(0, 1, 0)}) },
			func(t *testing.T, s State) {
				if !s.PaidUntil.Equal(now.AddDate(0, 2, 0)) {
					t.Fatalf("paidUntil = %v", s.PaidUntil)
				}
			}},
		{"a payment unfreezes a tenant frozen for failed payments", failed,
			func(s *State) { s.UnitsBought("cus_1", "cs_1", "card", 5, now, true) },
			func(t *testing.T, s State) {
				if s.Freezed || s.FreezedDueFailedPayment || s.PaymentFailed || s.PaymentFailedCount != 0 || !s.PaymentFailedDate.IsZero() {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a payment leaves a tenant frozen for another reason frozen", frozenByOperator,
			func(s *State) { s.UnitsBought("cus_1", "cs_1", "card", 5, now, true) },
			func(t *testing.T, s State) {
				if !s.Freezed {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"units add up and keep the later validity", State{PaidUnits: 3, OneTimePaymentValidThru: now.AddDate(2, 0, 0)},
			func(s *State) { s.UnitsBought("cus_1", "cs_2", "sepa", 5, now.AddDate(1, 0, 0), true) },
			func(t *testing.T, s State) {
				if s.PaidUnits != 8 || !s.OneTimePaymentValidThru.Equal(now.AddDate(2, 0, 0)) || s.Mode != ModePayment || s.PspxPaymentMethod != "sepa" {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"units bought by a subscriber keep mode subscription", State{Mode: ModeSubscription, PspxSubscriptionID: "sub_1", PspxPaymentMethod: "card"},
			func(s *State) { s.UnitsBought("cus_1", "cs_2", "sepa", 1, now, true) },
			func(t *testing.T, s State) {
				if s.Mode != ModeSubscription || s.PspxPaymentMethod != "card" || s.PaidUnits != 1 {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a setup stores the default payment method only", State{PaidUnits: 2},
			func(s *State) { s.PaymentMethodSetUp("cus_1", "cs_3", "pm_9") },
			func(t *testing.T, s State) {
				if s.PspxDefaultPaymentMethodID != "pm_9" || s.PspxCustomerID != "cus_1" || s.PaidUnits != 2 || s.Mode != "" {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"units charged without a checkout keep the session and payment method", State{PspxCheckoutSessionID: "cs_1", PspxPaymentMethod: "sepa"},
			func(s *State) { s.UnitsBought("cus_1", "", "", 4, now, true) },
			func(t *testing.T, s State) {
				if s.PspxCheckoutSessionID != "cs_1" || s.PspxPaymentMethod != "sepa" || s.PaidUnits != 4 || s.Mode != ModePayment {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a paid upgrade changes the plan and clears failure flags", failed,
			func(s *State) { s.PlanChanged("price_y", "prod_2", 3) },
			func(t *testing.T, s State) {
				if s.PspxPriceID != "price_y" || s.PspxProductID != "prod_2" || s.SubscriptionQuantity != 3 || s.PaymentFailed || s.Freezed {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a cancellation at period end names the period's end", State{PspxSubscriptionID: "sub_1"},
			func(s *State) { s.CancelsAtPeriodEnd(now.In(time.FixedZone("x", 3600))) },
			func(t *testing.T, s State) {
				if !s.PspxSubscriptionCancelAtPeriodEnd || !s.PspxSubscriptionCancelAt.Equal(now) || s.PspxSubscriptionCancelAt.Location() != time.UTC {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a renewal extends paid access and clears failure flags",
			State{PspxSubscriptionID: "sub_1", PaidUntil: now, PaymentFailed: true, PaymentFailedCount: 1, PaymentFailedDate: now},
			func(s *State) { s.Renewed(Renewal{"sub_1", "in_1"}, now.AddDate(0, 1, 0)) },
			func(t *testing.T, s State) {
				if !s.PaidUntil.Equal(now.AddDate(0, 1, 0)) || s.PaymentFailed || s.PaymentFailedCount != 0 || !s.EverPaid {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"an ended subscription keeps paid access and bought units", State{Mode: ModeSubscription, PspxSubscriptionID: "sub_1",
			PspxPriceID: "price_m", PspxProductID: "prod_1", SubscriptionQuantity: 2, PspxSubscriptionCancelAtPeriodEnd: true,
			PspxSubscriptionCancelAt: now, PaidUntil: now, PaidUnits: 3},
			func(s *State) { s.SubscriptionEnded() },
			func(t *testing.T, s State) {
				if s.PspxSubscriptionID != "" || s.PspxPriceID != "" || s.PspxProductID != "" || s.SubscriptionQuantity != 0 ||
					s.PspxSubscriptionCancelAtPeriodEnd || !s.PspxSubscriptionCancelAt.IsZero() || !s.PaidUntil.Equal(now) || s.Mode != ModePayment {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"deleting payment methods clears only the default", State{PspxDefaultPaymentMethodID: "pm_1", PspxCustomerID: "cus_1"},
			func(s *State) { s.PaymentMethodsDeleted() },
			func(t *testing.T, s State) {
				if s.PspxDefaultPaymentMethodID != "" || s.PspxCustomerID != "cus_1" {
					t.Fatalf("state = %+v", s)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.start
			tc.apply(&s)
			tc.check(t, s)
		})
	}
}

func TestOnlyPaymentsMarkATenantAsHavingPaid(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		apply func(*State)
		paid  bool
	}{
		{"units bought", func(s *State) { s.UnitsBought("cus_1", "cs_1", "card", 1, now, true) }, true},
		{"a subscription", func(s *State) { s.Subscribed(Subscription{ID: "sub_1", PaidUntil: now}) }, true},
		{"a paid upgrade", func(s *State) { s.PlanChanged("price_y", "prod_2", 1) }, true},
		{"a payment method set up", func(s *State) { s.PaymentMethodSetUp("cus_1", "cs_1", "pm_1") }, false},
		{"a cancellation", func(s *State) { s.CancelsAtPeriodEnd(now) }, false},
		{"payment methods deleted", func(s *State) { s.PaymentMethodsDeleted() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			tc.apply(&s)
			if s.EverPaid != tc.paid {
				t.Fatalf("everPaid = %v, want %v", s.EverPaid, tc.paid)
			}
		})
	}
}

func TestEachPaidRenewalIsRecordedOnceInAnyOrder(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := State{PspxSubscriptionID: "sub_1", PaidUntil: now}
	s.Renewed(Renewal{"sub_1", "in_2"}, now.AddDate(0, 2, 0)) // the later renewal arrived first
	s.SubscriptionEnded()                                     // and so did the end
	for _, tc := range []struct {
		name string
		r    Renewal
		want bool
	}{
		{"an earlier renewal, late and after the end", Renewal{"sub_1", "in_1"}, true},
		{"the same renewal again", Renewal{"sub_1", "in_2"}, false},
		{"no subscription", Renewal{"", "in_3"}, false},
		{"no invoice", Renewal{"sub_1", ""}, false},
	} {
		if got := s.Renews(tc.r); got != tc.want {
			t.Errorf("%s: Renews = %v, want %v", tc.name, got, tc.want)
		}
	}
	s.Renewed(Renewal{"sub_1", "in_1"}, now.AddDate(0, 1, 0))
	if !s.PaidUntil.Equal(now.AddDate(0, 2, 0)) || len(s.RenewalsPaid) != 2 || s.PspxSubscriptionID != "" {
		t.Fatalf("a late renewal shortened paid access, was not recorded or revived the subscription: %+v", s)
	}
}

func TestALateRenewalNeverClearsANewerFailure(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := State{PspxSubscriptionID: "sub_1", PaidUntil: now}
	// The renewal paying the next period is delivered only after the one after it failed.
	s.PaymentFailedFor(PaymentFailure{Key: "in_2", SubscriptionID: "sub_1", PaysUntil: now.AddDate(0, 2, 0), At: now}, 3)
	s.Renewed(Renewal{"sub_1", "in_1"}, now.AddDate(0, 1, 0))
	if !s.PaymentFailed || s.PaymentFailedCount != 1 || !s.PaidUntil.Equal(now.AddDate(0, 1, 0)) {
		t.Fatalf("after the late renewal: %+v", s)
	}
	s.Renewed(Renewal{"sub_1", "in_3"}, now.AddDate(0, 2, 0)) // the failed period paid after all
	if s.PaymentFailed || s.PaymentFailedCount != 0 {
		t.Fatalf("after paying the failed period: %+v", s)
	}
}
