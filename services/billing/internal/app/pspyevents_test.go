package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// fakePspy serves the payments and subscriptions a test sets; every other call panics (the
// embedded nil port), since applying a payment must make no other provider call.
type fakePspy struct {
	app.Pspy
	mu       sync.Mutex
	payments map[string]app.PspyPayment
	subs     map[string]app.PspySubscription
}

func (f *fakePspy) Payment(_ context.Context, _, id string) (app.PspyPayment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[id]
	if !ok {
		return app.PspyPayment{}, &app.ProviderError{Status: 404, Code: "Not Found"}
	}
	return p, nil
}

func (f *fakePspy) Subscription(_ context.Context, _, customerID, id string) (app.PspySubscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.subs[id]
	if !ok || s.CustomerID != customerID {
		return app.PspySubscription{}, &app.ProviderError{Status: 404, Code: "Not Found"}
	}
	return s, nil
}

type fakeTenants struct{ app.Tenants }

func (fakeTenants) Apply(context.Context, domain.Account) error { return nil }

func TestRecurringPspyPaymentsRenewOrFailOnce(t *testing.T) {
	now := time.Date(2026, 6, 20, 9, 0, 0, 0, time.UTC)
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	// The first payment was paid on 10 March at 14:00, so the subscription starts on 10 April and
	// the checkout paid until then.
	firstPaidUntil := time.Date(2026, 4, 10, 14, 0, 0, 0, time.UTC)
	recurring := func(id, status string, charged time.Time) app.PspyPayment {
		return app.PspyPayment{ID: id, Mode: "test", Status: status, SequenceType: "recurring", CustomerID: "cst_1",
			SubscriptionID: "sub_1", Amount: app.PspyAmount{Currency: "EUR", Value: "9.90"}, CreatedAt: charged}
	}
	april, may, june := recurring("tr_apr", "paid", day(4, 10)), recurring("tr_may", "paid", day(5, 10)), recurring("tr_jun", "paid", day(6, 10))
	failed := func(p app.PspyPayment, status string) app.PspyPayment { p.Status = status; return p }
	refunded := func(p app.PspyPayment) app.PspyPayment {
		p.AmountRefunded, p.RefundsCount = p.Amount, 1
		return p
	}
	chargedBack := func(p app.PspyPayment) app.PspyPayment {
		p.AmountChargedBack, p.ChargebacksCount = p.Amount, 1
		return p
	}
	renewed := app.Applied{Effect: "subscription.renewed"}
	counted := func(status string) app.Applied { return app.Applied{Effect: "payment.failed", Status: status} }
	nothing := func(status string) app.Applied { return app.Applied{Status: status} }
	type step struct {
		payment app.PspyPayment
		want    app.Applied
	}
	cases := []struct {
		name      string
		subID     string // the tenant's subscription; "" = sub_1
		customer  string // the payment's customer; "" = cst_1
		steps     []step
		paidUntil time.Time
		failures  int32
		frozen    bool
	}{
		{name: "a paid renewal extends access to its period's end, once however often it is delivered",
			steps:     []step{{april, renewed}, {april, nothing("")}, {april, nothing("")}},
			paidUntil: day(5, 10)},
		{name: "renewals delivered out of order: the earlier period's comes late, is recorded once and shortens nothing",
			steps:     []step{{may, renewed}, {april, renewed}, {april, nothing("")}},
			paidUntil: day(6, 10)},
		{name: "a failed recurring payment counts once per payment and status",
			steps:     []step{{failed(april, "failed"), counted("failed")}, {failed(april, "failed"), nothing("failed")}},
			paidUntil: firstPaidUntil, failures: 1},
		{name: "an expired recurring payment counts too",
			steps:     []step{{failed(april, "expired"), counted("expired")}},
			paidUntil: firstPaidUntil, failures: 1},
		{name: "three failed periods freeze the tenant",
			steps: []step{{failed(april, "failed"), counted("failed")}, {failed(may, "failed"), counted("failed")},
				{failed(june, "failed"), counted("failed")}},
			paidUntil: firstPaidUntil, failures: 3, frozen: true},
		{name: "a paid period after failures clears them and lifts the freeze for failed payments",
			steps: []step{{failed(april, "failed"), counted("failed")}, {failed(may, "failed"), counted("failed")},
				{failed(june, "failed"), counted("failed")}, {recurring("tr_jul", "paid", day(7, 10)), renewed}},
			paidUntil: day(8, 10)},
		{name: "a failure delivered after a later period was paid is stale",
			steps:     []step{{may, renewed}, {failed(april, "failed"), nothing("failed")}},
			paidUntil: day(6, 10)},
		{name: "a refund of a paid renewal applies nothing again, so a later failure stays counted",
			steps:     []step{{april, renewed}, {failed(may, "failed"), counted("failed")}, {refunded(april), nothing("")}},
			paidUntil: day(5, 10), failures: 1},
		{name: "a chargeback of an applied renewal counts as a failed payment once; access paid stays",
			steps:     []step{{april, renewed}, {chargedBack(april), counted("")}, {chargedBack(april), nothing("")}},
			paidUntil: day(5, 10), failures: 1},
		{name: "a chargeback seen before its renewal applies counts, and the renewal never applies",
			steps:     []step{{chargedBack(april), counted("")}, {chargedBack(april), nothing("")}},
			paidUntil: firstPaidUntil, failures: 1},
		{name: "a chargeback after the next period failed is one more failure",
			steps:     []step{{april, renewed}, {failed(may, "failed"), counted("failed")}, {chargedBack(april), counted("")}},
			paidUntil: day(5, 10), failures: 2},
		{name: "a chargeback of a period a later payment paid beyond is stale",
			steps:     []step{{april, renewed}, {may, renewed}, {chargedBack(april), nothing("")}},
			paidUntil: day(6, 10)},
		{name: "a payment whose outcome is yet to come answers its status",
			steps:     []step{{failed(april, "pending"), nothing("pending")}, {failed(april, "open"), nothing("open")}},
			paidUntil: firstPaidUntil},
		{name: "a subscription the tenant no longer has: its paid renewal still counts as paid, its failure not", subID: "sub_0",
			steps:     []step{{april, renewed}, {april, nothing("")}, {failed(may, "failed"), nothing("failed")}},
			paidUntil: day(5, 10)},
		{name: "a customer Berth created on another connection is not Berth's here", customer: "cst_elsewhere",
			steps:     []step{{april, app.Applied{Ignored: true}}, {failed(may, "failed"), app.Applied{Ignored: true}}},
			paidUntil: firstPaidUntil},
		{name: "a customer Berth did not create is not Berth's", customer: "cst_stranger",
			steps:     []step{{april, app.Applied{Ignored: true}}},
			paidUntil: firstPaidUntil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			key := make([]byte, sealbox.KeySize)
			box, err := sealbox.New(key)
			if err != nil {
				t.Fatal(err)
			}
			store := memory.New(&events.MemoryOutbox{})
			py := &fakePspy{payments: map[string]app.PspyPayment{}, subs: map[string]app.PspySubscription{
				"sub_1": {ID: "sub_1", CustomerID: "cst_1", Status: "active", Interval: "1 month", StartDate: "2026-04-10"},
				"sub_2": {ID: "sub_2", CustomerID: "cst_elsewhere", Status: "active", Interval: "1 month", StartDate: "2026-04-10"},
			}}
			svc, err := app.New(app.Config{Store: store, Tenants: fakeTenants{}, Pspy: py, Box: box, Clock: func() time.Time { return now },
				NewID: uuid.NewString, PublicURL: "https://berth.example"})
			if err != nil {
				t.Fatal(err)
			}
			appID, otherApp, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
			conn, err := svc.CreateConnection(ctx, app.NewConnection{AppID: appID, Provider: "pspy", TestSecretKey: "test_aaaaaaaaaaaaaaaaaaaaaaaaa"})
			if err != nil {
				t.Fatal(err)
			}
			other, err := svc.CreateConnection(ctx, app.NewConnection{AppID: otherApp, Provider: "pspy", TestSecretKey: "test_bbbbbbbbbbbbbbbbbbbbbbbbb"})
			if err != nil {
				t.Fatal(err)
			}
			for _, cu := range []domain.Customer{{ID: "cst_1", ConnectionID: conn.ID, AppID: appID, TenantID: tenantID, Test: true},
				{ID: "cst_elsewhere", ConnectionID: other.ID, AppID: otherApp, TenantID: uuid.NewString(), Test: true}} {
				if _, err := store.SaveCustomer(ctx, cu); err != nil {
					t.Fatal(err)
				}
			}
			subID := c.subID
			if subID == "" {
				subID = "sub_1"
			}
			if _, err := store.UpdateAccount(ctx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) {
				a.State.Subscribed(domain.Subscription{CustomerID: "cst_1", ID: subID, PriceID: "price_1", Quantity: 1, PaidUntil: firstPaidUntil, Test: true})
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			for i, s := range c.steps {
				p := s.payment
				if c.customer != "" {
					p.CustomerID = c.customer
					if c.customer == "cst_elsewhere" {
						p.SubscriptionID = "sub_2"
					}
				}
				py.mu.Lock()
				py.payments[p.ID] = p
				py.mu.Unlock()
				got, err := svc.ApplyPspyPayment(ctx, conn.ID, p.ID)
				if err != nil || got != s.want {
					t.Fatalf("step %d (%s %s): %+v, %v; want %+v", i, p.ID, p.Status, got, err, s.want)
				}
			}
			a, err := store.Account(ctx, appID, tenantID)
			if err != nil {
				t.Fatal(err)
			}
			st := a.State
			if !st.PaidUntil.Equal(c.paidUntil) || st.PaymentFailedCount != c.failures || st.PaymentFailed != (c.failures > 0) ||
				st.Freezed != c.frozen || st.FreezedDueFailedPayment != c.frozen || st.PspxSubscriptionID != subID {
				t.Fatalf("paidUntil %v (want %v), failures %d (want %d), freezed %v/%v (want %v)",
					st.PaidUntil, c.paidUntil, st.PaymentFailedCount, c.failures, st.Freezed, st.FreezedDueFailedPayment, c.frozen)
			}
		})
	}
}
