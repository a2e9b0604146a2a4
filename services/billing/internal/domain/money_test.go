package domain

import (
	"slices"
	"testing"
	"time"
)

func TestMoneyChangesNameWhatAnEffectDidToATenantsMoney(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	subscribed := State{PspxSubscriptionID: "sub_1", PspxPriceID: "price_1", SubscriptionQuantity: 1, Mode: ModeSubscription, PaidUntil: now}
	failedTwice := subscribed
	failedTwice.PaymentFailedCount = 2
	frozen := subscribed
	frozen.PaymentFailedCount, frozen.Freezed, frozen.FreezedDueFailedPayment = 3, true, true
	failure := func(key string) PaymentFailure {
		return PaymentFailure{Key: key, SubscriptionID: "sub_1", PaysUntil: now.AddDate(0, 1, 0), At: now}
	}
	cases := []struct {
		name   string
		start  State
		effect func(*State)
		kinds  []string
	}{
		{"units bought", State{PaidUnits: 2}, func(s *State) { s.UnitsBought("cus_1", "cs_1", "card", 3, now, true) }, []string{MoneyOneTime}},
		{"a first subscription starts", State{}, func(s *State) { s.Subscribed(Subscription{ID: "sub_1", PaidUntil: now}) }, []string{MoneySubscriptionStarted}},
		{"a new subscription replaces one", subscribed, func(s *State) { s.Subscribed(Subscription{ID: "sub_2", PaidUntil: now.AddDate(0, 1, 0)}) },
			[]string{MoneySubscriptionEnded, MoneySubscriptionStarted}},
		{"a renewal", subscribed, func(s *State) { s.Renewed(Renewal{"sub_1", "in_1"}, now.AddDate(0, 1, 0)) }, []string{MoneySubscriptionRenewed}},
		{"a renewal delivered after its subscription ended", State{PaidUntil: now}, func(s *State) { s.Renewed(Renewal{"sub_1", "in_9"}, now.AddDate(0, 1, 0)) },
			[]string{MoneySubscriptionRenewed}},
		{"a renewal delivered after a later one", subscribed, func(s *State) { s.Renewed(Renewal{"sub_1", "in_1"}, now.AddDate(0, -1, 0)) }, []string{MoneySubscriptionRenewed}},
		{"a paid upgrade", subscribed, func(s *State) { s.PlanChanged("price_2", "prod_1", 1) }, []string{MoneySubscriptionChanged}},
		{"a cancellation at period end", subscribed, func(s *State) { s.CancelsAtPeriodEnd(now) }, []string{MoneySubscriptionCancelled}},
		{"the end of a subscription", subscribed, func(s *State) { s.SubscriptionEnded() }, []string{MoneySubscriptionEnded}},
		{"a counted failure", subscribed, func(s *State) { s.PaymentFailedFor(failure("in_1"), 3) }, []string{MoneyPaymentFailed}},
		{"the failure that freezes", failedTwice, func(s *State) { s.PaymentFailedFor(failure("in_3"), 3) }, []string{MoneyPaymentFailed, MoneyTenantFrozen}},
		{"a renewal that unfreezes", frozen, func(s *State) { s.Renewed(Renewal{"sub_1", "in_4"}, now.AddDate(0, 1, 0)) }, []string{MoneySubscriptionRenewed, MoneyTenantUnfrozen}},
		{"an operator's freeze of a tenant frozen for failures is no unfreeze", frozen, func(s *State) { s.FrozenByOperator(true) }, nil},
		{"an operator lifts a freeze for failures", frozen, func(s *State) { s.FrozenByOperator(false) }, []string{MoneyTenantUnfrozen}},
		{"a payment method set up is no money", State{}, func(s *State) { s.PaymentMethodSetUp("cus_1", "cs_1", "pm_1") }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			after := c.start
			after.FailedPayments = slices.Clone(c.start.FailedPayments)
			after.RenewalsPaid = slices.Clone(c.start.RenewalsPaid)
			c.effect(&after)
			var kinds []string
			for _, m := range MoneyChanges(c.start, after) {
				kinds = append(kinds, m.Kind)
			}
			if !slices.Equal(kinds, c.kinds) {
				t.Fatalf("changes %v, want %v", kinds, c.kinds)
			}
		})
	}
	units := MoneyChanges(State{PaidUnits: 2}, State{PaidUnits: 5})[0]
	if units.Units != 3 || units.UnitsBefore != 2 {
		t.Fatalf("units %+v", units)
	}
	if ended := MoneyChanges(subscribed, State{})[0]; ended.Ended.PspxSubscriptionID != "sub_1" || ended.Ended.PspxPriceID != "price_1" {
		t.Fatalf("ended %+v", ended)
	}
}

func TestAPaymentIsNamedOnlyByTheEventsThatRecordIt(t *testing.T) {
	p := Payment{ID: "cs_1", UserID: "user", PriceID: "price_units", Amount: 1190, Currency: "eur"}
	for _, tc := range []struct {
		kind string
		want Payment
	}{
		{MoneyOneTime, p},
		{MoneySubscriptionStarted, Payment{ID: "cs_1", UserID: "user", Amount: 1190, Currency: "eur"}}, // the subscription's own price is in the state
		{MoneySubscriptionRenewed, Payment{Amount: 1190, Currency: "eur"}},                             // a renewal names its invoice itself
		{MoneySubscriptionChanged, Payment{}},
		{MoneySubscriptionCancelled, Payment{}},
		{MoneySubscriptionEnded, Payment{}},
		{MoneyPaymentFailed, Payment{}},
		{MoneyTenantFrozen, Payment{}},
		{MoneyTenantUnfrozen, Payment{}},
	} {
		if got := p.For(tc.kind); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.kind, got, tc.want)
		}
	}
}
