package domain

import (
	"testing"
	"time"
)

func TestSubscriptionApplyKeepsTheNewestRevisionAndAStickyEnd(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	state := func(rev int64, price string, paid bool, until time.Time) SubscriptionChange {
		return SubscriptionChange{State: Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant",
			PriceID: price, CustomerID: "cus_1", Paid: paid, Until: until, Revision: rev}}
	}
	ended := func(rev int64) SubscriptionChange {
		c := state(rev, "price_end", true, day(28))
		c.Ended = true
		return c
	}
	withUser := func(c SubscriptionChange, user string) SubscriptionChange { c.State.UserID = user; return c }
	tests := []struct {
		name    string
		changes []SubscriptionChange
		want    Subscription
	}{
		{"a first change creates it", []SubscriptionChange{withUser(state(3, "price_a", true, day(10)), "user")},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", UserID: "user", PriceID: "price_a", CustomerID: "cus_1", Paid: true, Until: day(10), Revision: 3}},
		{"a newer revision replaces the state", []SubscriptionChange{state(3, "price_a", true, day(10)), state(5, "price_b", false, day(20))},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_b", CustomerID: "cus_1", Until: day(20), Revision: 5}},
		{"an older revision arriving late changes nothing", []SubscriptionChange{state(5, "price_b", false, day(20)), state(3, "price_a", true, day(10))},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_b", CustomerID: "cus_1", Until: day(20), Revision: 5}},
		{"the payer once known is kept", []SubscriptionChange{withUser(state(3, "price_a", true, day(10)), "user"), withUser(state(4, "price_a", true, day(11)), "other")},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", UserID: "user", PriceID: "price_a", CustomerID: "cus_1", Paid: true, Until: day(11), Revision: 4}},
		{"the end keeps the state the subscription had", []SubscriptionChange{state(3, "price_a", true, day(10)), ended(4)},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_a", CustomerID: "cus_1", Paid: true, Cancelled: true, Until: day(10), Revision: 3, EndedRevision: 4}},
		{"changes recorded after the end are the tenant's, not the subscription's", []SubscriptionChange{state(3, "price_a", true, day(10)), ended(4), state(6, "price_z", false, day(30))},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_a", CustomerID: "cus_1", Paid: true, Cancelled: true, Until: day(10), Revision: 3, EndedRevision: 4}},
		{"an end delivered first still lets the earlier states in", []SubscriptionChange{ended(4), state(3, "price_a", true, day(10))},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_a", CustomerID: "cus_1", Paid: true, Cancelled: true, Until: day(10), Revision: 3, EndedRevision: 4}},
		{"an end alone keeps the ids it names", []SubscriptionChange{ended(4)},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_end", CustomerID: "cus_1", Cancelled: true, EndedRevision: 4}},
		{"an end delivered twice is one end", []SubscriptionChange{state(3, "price_a", true, day(10)), ended(4), ended(4)},
			Subscription{ID: "item", AppID: "app", SubscriptionID: "sub_1", TenantID: "tenant", PriceID: "price_a", CustomerID: "cus_1", Paid: true, Cancelled: true, Until: day(10), Revision: 3, EndedRevision: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Subscription
			for _, c := range tc.changes {
				got = got.Apply(c)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSubscriptionItemIDIsStablePerAppAndSubscription(t *testing.T) {
	a := SubscriptionItemID("app-1", "sub_1")
	if a != SubscriptionItemID("app-1", "sub_1") {
		t.Fatal("the same subscription got two ids")
	}
	for _, other := range []string{SubscriptionItemID("app-2", "sub_1"), SubscriptionItemID("app-1", "sub_2"), SubscriptionItemID("app-1s", "ub_1")} {
		if other == a {
			t.Fatalf("%s names two subscriptions", a)
		}
	}
}
