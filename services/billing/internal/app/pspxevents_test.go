package app_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// fakePspx serves the invoices a test sets and records line updates; every other call panics
// (the embedded nil port), since these events must make no other provider call.
type fakePspx struct {
	app.Pspx
	mu       sync.Mutex
	invoices map[string]app.PspxInvoice
	updates  int
}

func (f *fakePspx) Invoice(_ context.Context, _, id string) (app.PspxInvoice, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	inv, ok := f.invoices[id]
	if !ok {
		return app.PspxInvoice{}, &app.ProviderError{Status: 404, Code: "resource_missing"}
	}
	return inv, nil
}

func (f *fakePspx) UpdateInvoiceLine(_ context.Context, _, _, invoiceID, lineID, description string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	inv := f.invoices[invoiceID]
	for i := range inv.Lines {
		if inv.Lines[i].ID == lineID {
			inv.Lines[i].Description = description
		}
	}
	f.updates++
	return nil
}

func (f *fakePspx) set(inv app.PspxInvoice) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.invoices[inv.ID] = inv
}

type pspxFixture struct {
	svc            *app.Service
	store          *memory.Store
	outbox         *events.MemoryOutbox
	px             *fakePspx
	conn           domain.Connection
	appID, tenant  string
	paidUntil, now time.Time
}

func newPspxFixture(t *testing.T) pspxFixture {
	t.Helper()
	ctx := context.Background()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := pspxFixture{outbox: &events.MemoryOutbox{}, px: &fakePspx{invoices: map[string]app.PspxInvoice{}},
		appID: uuid.NewString(), tenant: uuid.NewString(),
		now: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC), paidUntil: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	f.store = memory.New(f.outbox)
	if f.svc, err = app.New(app.Config{Store: f.store, Tenants: fakeTenants{}, Pspx: f.px, Box: box, Clock: func() time.Time { return f.now },
		NewID: uuid.NewString, PublicURL: "https://berth.example"}); err != nil {
		t.Fatal(err)
	}
	if f.conn, err = f.svc.CreateConnection(ctx, app.NewConnection{AppID: f.appID, Provider: "pspx", TestSecretKey: "sk_test_aaaaaaaaaaaaaaaaaaaaaaaa"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.SaveCustomer(ctx, domain.Customer{ID: "cus_1", ConnectionID: f.conn.ID, AppID: f.appID, TenantID: f.tenant, Test: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.UpdateAccount(ctx, f.appID, f.tenant, func(a *domain.Account) ([]events.Event, error) {
		a.State.Subscribed(domain.Subscription{CustomerID: "cus_1", ID: "sub_1", PriceID: "price_basic", Quantity: 1, PaidUntil: f.paidUntil, Test: true})
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f pspxFixture) apply(t *testing.T, typ, invoiceID string) app.Applied {
	t.Helper()
	obj, _ := json.Marshal(map[string]string{"id": invoiceID, "object": "invoice", "customer": "cus_1"})
	got, err := f.svc.ApplyPspxEvent(context.Background(), f.conn.ID, false, typ, obj)
	if err != nil {
		t.Fatalf("%s %s: %v", typ, invoiceID, err)
	}
	return got
}

func (f pspxFixture) state(t *testing.T) domain.State {
	t.Helper()
	a, err := f.store.Account(context.Background(), f.appID, f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	return a.State
}

// renewal is a renewal invoice of sub_1 paying the month after start.
func renewal(id, status string, start time.Time) app.PspxInvoice {
	return app.PspxInvoice{ID: id, Customer: "cus_1", Status: status, Subscription: "sub_1", BillingReason: "subscription_cycle",
		Lines: []app.PspxInvoiceLine{{ID: "il_" + id, Description: "1 × Basic", Quantity: 1, PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0)}}}
}

func TestAnUpgradeInvoiceTheProviderGaveUpOnFailsItsChargeOnceAndKeepsThePlan(t *testing.T) {
	for _, typ := range []string{"invoice.voided", "invoice.marked_uncollectible"} {
		t.Run(typ, func(t *testing.T) {
			f := newPspxFixture(t)
			ctx := context.Background()
			charge := domain.Charge{ID: uuid.NewString(), AppID: f.appID, TenantID: f.tenant, ConnectionID: f.conn.ID, Test: true, Kind: domain.ChargeUpgrade,
				CustomerID: "cus_1", Price: "price_pro", Quantity: 1, FromPrice: "price_basic", FromQuantity: 1, SubscriptionID: "sub_1",
				InvoiceID: "in_up", Status: domain.ChargeOpen, CreatedAt: f.now, UpdatedAt: f.now}
			if err := f.store.CreateCharge(ctx, charge); err != nil {
				t.Fatal(err)
			}
			status := map[string]string{"invoice.voided": "void", "invoice.marked_uncollectible": "uncollectible"}[typ]
			f.px.set(app.PspxInvoice{ID: "in_up", Customer: "cus_1", Status: status, Subscription: "sub_1", BillingReason: "manual",
				Metadata: map[string]string{"berthChargeId": charge.ID}})
			if got := f.apply(t, typ, "in_up"); got.Effect != "charge.failed" {
				t.Fatalf("first delivery: %+v", got)
			}
			if got := f.apply(t, typ, "in_up"); got != (app.Applied{}) {
				t.Fatalf("second delivery: %+v", got)
			}
			c, err := f.store.Charge(ctx, charge.ID)
			if err != nil || c.Status != domain.ChargeFailed {
				t.Fatalf("charge %+v, %v", c, err)
			}
			if st := f.state(t); st.PspxPriceID != "price_basic" || st.PaymentFailed {
				t.Fatalf("the old plan must stay and no renewal failed: %+v", st)
			}
		})
	}
}

func TestRenewalInvoicesApplyOnceInAnyOrder(t *testing.T) {
	f := newPspxFixture(t)
	june, july := renewal("in_jun", "paid", f.paidUntil), renewal("in_jul", "uncollectible", f.paidUntil.AddDate(0, 1, 0))
	f.px.set(june)
	f.px.set(july)
	// July's renewal failed for good and is handled first; June's paid renewal arrives late.
	for range 3 {
		f.apply(t, "invoice.marked_uncollectible", "in_jul")
	}
	if st := f.state(t); st.PaymentFailedCount != 1 || !st.PaidUntil.Equal(f.paidUntil) {
		t.Fatalf("after July's failure, delivered three times: %+v", st)
	}
	if got := f.apply(t, "invoice.paid", "in_jun"); got.Effect != "subscription.renewed" {
		t.Fatalf("June's renewal: %+v", got)
	}
	if got := f.apply(t, "invoice.paid", "in_jun"); got != (app.Applied{}) {
		t.Fatalf("June's renewal again: %+v", got)
	}
	st := f.state(t)
	if !st.PaidUntil.Equal(f.paidUntil.AddDate(0, 1, 0)) || st.PaymentFailedCount != 1 || !st.PaymentFailed {
		t.Fatalf("a late renewal of an earlier period must not clear July's failure: %+v", st)
	}
	// July paid after all (a retry on another card): the failure clears.
	july.Status = "paid"
	f.px.set(july)
	f.apply(t, "invoice.paid", "in_jul")
	if st := f.state(t); !st.PaidUntil.Equal(f.paidUntil.AddDate(0, 2, 0)) || st.PaymentFailed || st.PaymentFailedCount != 0 {
		t.Fatalf("after July was paid: %+v", st)
	}
}

func TestADraftRenewalGetsTheAppsLineTextOnce(t *testing.T) {
	f := newPspxFixture(t)
	ctx := context.Background()
	draft := renewal("in_draft", "draft", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	f.px.set(draft)
	if got := f.apply(t, "invoice.created", "in_draft"); got.Effect != "" || f.px.updates != 0 {
		t.Fatalf("without the app's text nothing is touched: %+v, %d updates", got, f.px.updates)
	}
	text := "Basic × {quantity}, {start} to {end}"
	if _, err := f.svc.UpdateAppSettings(ctx, f.appID, domain.SettingsPatch{RenewalLineDescription: &text}); err != nil {
		t.Fatal(err)
	}
	if got := f.apply(t, "invoice.created", "in_draft"); got.Effect != "invoice.described" {
		t.Fatalf("first delivery: %+v", got)
	}
	if got := f.apply(t, "invoice.created", "in_draft"); got.Effect != "" || f.px.updates != 1 {
		t.Fatalf("a line that says it already is left alone: %+v, %d updates", got, f.px.updates)
	}
	if line := f.px.invoices["in_draft"].Lines[0].Description; line != "Basic × 1, 2026-06-01 to 2026-07-01" {
		t.Fatalf("line %q", line)
	}
	finalized := renewal("in_open", "open", time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	f.px.set(finalized)
	if f.apply(t, "invoice.created", "in_open"); f.px.updates != 1 {
		t.Fatal("a finalized invoice was edited")
	}
}

// A route 13 invoice paid after the route answered (a bank debit) is applied by invoice.paid; its
// payment.one_time event must still name the body's userId, the invoice and the charge's price,
// although the tenant's subscription has a price of its own in the state.
func TestARoute13InvoicePaidLaterNamesItsPayerInvoiceAndPrice(t *testing.T) {
	f := newPspxFixture(t)
	ctx := context.Background()
	payer := uuid.NewString()
	charge := domain.Charge{ID: uuid.NewString(), AppID: f.appID, TenantID: f.tenant, ConnectionID: f.conn.ID, Test: true, Kind: domain.ChargeInvoice,
		CustomerID: "cus_1", UserID: payer, Price: "price_units", TaxRate: "txr_1", Quantity: 4, InvoiceID: "in_units",
		Status: domain.ChargeOpen, CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.store.CreateCharge(ctx, charge); err != nil {
		t.Fatal(err)
	}
	f.px.set(app.PspxInvoice{ID: "in_units", Customer: "cus_1", Status: "paid", BillingReason: "manual", AmountPaid: 4760, Currency: "eur",
		Metadata: map[string]string{"berthChargeId": charge.ID}})
	if got := f.apply(t, "invoice.paid", "in_units"); got.Effect != "charge.invoice" {
		t.Fatalf("invoice.paid: %+v", got)
	}
	pending, err := f.outbox.Pending(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var paid []*billingv1.MoneyChanged
	for _, ev := range pending {
		if ev.Type == billingv1.EventPaymentOneTime {
			var m billingv1.MoneyChanged
			if err := ev.Decode(&m); err != nil {
				t.Fatal(err)
			}
			paid = append(paid, &m)
		}
	}
	if len(paid) != 1 {
		t.Fatalf("%d one-time payment events, want 1", len(paid))
	}
	if m := paid[0]; m.GetUserId() != payer || m.GetPaymentId() != "in_units" || m.GetPriceId() != "price_units" || m.GetUnits() != 4 ||
		m.GetAmount() != 4760 || m.GetCurrency() != "eur" {
		t.Fatalf("one-time payment names user %q payment %q price %q units %d amount %d %q", m.GetUserId(), m.GetPaymentId(), m.GetPriceId(), m.GetUnits(), m.GetAmount(), m.GetCurrency())
	}
}
