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
			func(s *State) { s.UnitsBought("cus_1", "cs_1", "card", 5, now) },
			func(t *testing.T, s State) {
				if s.Freezed || s.FreezedDueFailedPayment || s.PaymentFailed || s.PaymentFailedCount != 0 || !s.PaymentFailedDate.IsZero() {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"a payment leaves a tenant frozen for another reason frozen", frozenByOperator,
			func(s *State) { s.UnitsBought("cus_1", "cs_1", "card", 5, now) },
			func(t *testing.T, s State) {
				if !s.Freezed {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"units add up and keep the later validity", State{PaidUnits: 3, OneTimePaymentValidThru: now.AddDate(2, 0, 0)},
			func(s *State) { s.UnitsBought("cus_1", "cs_2", "sepa", 5, now.AddDate(1, 0, 0)) },
			func(t *testing.T, s State) {
				if s.PaidUnits != 8 || !s.OneTimePaymentValidThru.Equal(now.AddDate(2, 0, 0)) || s.Mode != ModePayment || s.PspxPaymentMethod != "sepa" {
					t.Fatalf("state = %+v", s)
				}
			}},
		{"units bought by a subscriber keep mode subscription", State{Mode: ModeSubscription, PspxSubscriptionID: "sub_1", PspxPaymentMethod: "card"},
			func(s *State) { s.UnitsBought("cus_1", "cs_2", "sepa", 1, now) },
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
			func(s *State) { s.UnitsBought("cus_1", "", "", 4, now) },
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
