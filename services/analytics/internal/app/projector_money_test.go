package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// money builds a money event of the tenant at account revision rev, recorded at at.
func money(t *testing.T, typ eventsv1.Type, appID, tenantID string, rev int64, at time.Time, m *billingv1.MoneyChanged) events.Event {
	m.AppId, m.TenantId, m.Revision, m.At = appID, tenantID, rev, at.Format(time.RFC3339Nano)
	if m.CustomerId == "" {
		m.CustomerId = "cus_1"
	}
	return event(t, typ, appID, at, m)
}

func subscriptionsOf(t *testing.T, s app.Store, appID string, from, to time.Time) []app.SubscriptionRecord {
	t.Helper()
	var out []app.SubscriptionRecord
	err := s.VisitSubscriptions(context.Background(), appID, from, to, app.Visitor[app.SubscriptionRecord]{
		Count: func(int) error { return nil },
		Each:  func(r app.SubscriptionRecord) error { out = append(out, r); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func oneTimesOf(t *testing.T, s app.Store, appID string) []app.OneTimePaymentRecord {
	t.Helper()
	var out []app.OneTimePaymentRecord
	err := s.VisitOneTimePayments(context.Background(), appID, t0.Add(-1000*time.Hour), t0.Add(1000*time.Hour), app.Visitor[app.OneTimePaymentRecord]{
		Count: func(int) error { return nil },
		Each:  func(r app.OneTimePaymentRecord) error { out = append(out, r); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMoneyEventsBuildASubscriptionsLifeAndItsPayments(t *testing.T) {
	appID, tenantID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	month := 30 * 24 * time.Hour
	started := money(t, billingv1.EventSubscriptionStarted, appID, tenantID, 2, t0, &billingv1.MoneyChanged{
		SubscriptionId: "sub_1", PriceId: "price_m", PaidUntil: t0.Add(month).Format(time.RFC3339), PaymentId: "cs_1", UserId: userID, Test: true,
	})
	renewed := money(t, billingv1.EventSubscriptionRenewed, appID, tenantID, 3, t0.Add(month), &billingv1.MoneyChanged{
		SubscriptionId: "sub_1", PriceId: "price_m", PaidUntil: t0.Add(2 * month).Format(time.RFC3339), PaymentId: "in_2", Test: true,
	})
	failed := money(t, billingv1.EventPaymentFailed, appID, tenantID, 4, t0.Add(2*month), &billingv1.MoneyChanged{
		SubscriptionId: "sub_1", PriceId: "price_m", PaidUntil: t0.Add(2 * month).Format(time.RFC3339), PaymentFailedCount: 1, Test: true,
	})
	ended := money(t, billingv1.EventSubscriptionEnded, appID, tenantID, 5, t0.Add(3*month), &billingv1.MoneyChanged{
		SubscriptionId: "sub_1", PriceId: "price_m", PaymentFailedCount: 1, Test: true,
	})
	store := memory.New()
	svc := service(t, app.Config{Store: store})
	// Delivered out of order and twice each: the outcome is the in-order one.
	apply(t, svc, ended, renewed, failed, started, started, renewed, failed, ended)

	all := subscriptionsOf(t, store, appID, t0.Add(-month), t0.Add(4*month))
	if len(all) != 1 {
		t.Fatalf("listed %d items, want one per subscription", len(all))
	}
	want := domain.Subscription{
		ID: domain.SubscriptionItemID(appID, "sub_1"), AppID: appID, SubscriptionID: "sub_1", TenantID: tenantID, UserID: userID,
		PriceID: "price_m", CustomerID: "cus_1", Test: true, Paid: false, Cancelled: true, Until: t0.Add(2 * month), Revision: 4, EndedRevision: 5,
	}
	if all[0].Subscription != want {
		t.Fatalf("subscription\n %+v\nwant\n %+v", all[0].Subscription, want)
	}
	tests := []struct {
		name     string
		from, to time.Time
		listed   bool
	}{
		{"the first payment's day", t0.Add(-time.Hour), t0.Add(time.Hour), true},
		{"the renewal's day", t0.Add(month - time.Hour), t0.Add(month + time.Hour), true},
		{"between the payments", t0.Add(time.Hour), t0.Add(month - time.Hour), false},
		{"the failure's day: no payment", t0.Add(2*month - time.Hour), t0.Add(2*month + time.Hour), false},
		{"the end's day: no payment", t0.Add(3*month - time.Hour), t0.Add(3*month + time.Hour), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(subscriptionsOf(t, store, appID, tc.from, tc.to)); (got == 1) != tc.listed {
				t.Fatalf("listed %d items, want listed=%v", got, tc.listed)
			}
		})
	}
}

func TestAOneTimePaymentIsRecordedOnceWithItsUnitsAndPayer(t *testing.T) {
	appID, tenantID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	ev := money(t, billingv1.EventPaymentOneTime, appID, tenantID, 7, t0, &billingv1.MoneyChanged{
		PriceId: "price_units", Units: 5, UnitsBefore: 10, PaymentId: "cs_9", UserId: userID,
	})
	store := memory.New()
	apply(t, service(t, app.Config{Store: store}), ev, ev)
	got := oneTimesOf(t, store, appID)
	if len(got) != 1 {
		t.Fatalf("recorded %d payments for one event delivered twice", len(got))
	}
	want := domain.OneTimePayment{ID: ev.ID, AppID: appID, TenantID: tenantID, UserID: userID, PaymentID: "cs_9", PriceID: "price_units",
		CustomerID: "cus_1", Units: 5, UnitsBefore: 10, At: t0}
	if got[0].Payment != want {
		t.Fatalf("payment\n %+v\nwant\n %+v", got[0].Payment, want)
	}
}

func TestMoneyEventsThatNameNoSubscriptionLeaveTheSubscriptionsAlone(t *testing.T) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	store := memory.New()
	apply(t, service(t, app.Config{Store: store}),
		money(t, billingv1.EventPaymentFailed, appID, tenantID, 2, t0, &billingv1.MoneyChanged{PaymentFailedCount: 1}),
		money(t, billingv1.EventTenantFrozen, appID, tenantID, 3, t0, &billingv1.MoneyChanged{PaymentFailedCount: 3}))
	if got := subscriptionsOf(t, store, appID, t0.Add(-time.Hour), t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("listed %v", got)
	}
}

func TestMalformedMoneyEventsAreRefused(t *testing.T) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	tests := []struct {
		name string
		typ  eventsv1.Type
		m    *billingv1.MoneyChanged
		edit func(*billingv1.MoneyChanged)
	}{
		{"tenant id not a UUID", billingv1.EventPaymentOneTime, &billingv1.MoneyChanged{Units: 1}, func(m *billingv1.MoneyChanged) { m.TenantId = "t-1" }},
		{"user id not a UUID", billingv1.EventSubscriptionStarted, &billingv1.MoneyChanged{SubscriptionId: "sub_1", UserId: "bob"}, nil},
		{"paidUntil not RFC 3339", billingv1.EventSubscriptionRenewed, &billingv1.MoneyChanged{SubscriptionId: "sub_1", PaidUntil: "next month"}, nil},
		{"at not RFC 3339", billingv1.EventPaymentOneTime, &billingv1.MoneyChanged{Units: 1}, func(m *billingv1.MoneyChanged) { m.At = "today" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := money(t, tc.typ, appID, tenantID, 1, t0, tc.m)
			if tc.edit != nil {
				tc.edit(tc.m)
				ev = event(t, tc.typ, appID, t0, tc.m)
			}
			store := memory.New()
			if err := events.Handle(service(t, app.Config{Store: store}).Apply)(context.Background(), ev); !errors.Is(err, app.ErrMalformed) {
				t.Fatalf("Apply = %v, want ErrMalformed", err)
			}
			if n := len(oneTimesOf(t, store, appID)) + len(subscriptionsOf(t, store, appID, t0.Add(-time.Hour), t0.Add(time.Hour))); n != 0 {
				t.Fatalf("a refused event left %d records", n)
			}
		})
	}
}
