package grpcapi

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// checkoutPspy is a pspy that opens payments and subscriptions, and lets the test mark a payment
// paid. Every other call panics (the embedded nil port): a checkout makes no other provider call.
type checkoutPspy struct {
	app.Pspy
	mu       sync.Mutex
	payments map[string]app.PspyPayment
}

func (f *checkoutPspy) CreateCustomer(_ context.Context, _, _ string, _ app.PspyCustomerInput) (app.PspyCustomer, error) {
	return app.PspyCustomer{ID: "cst_1", Mode: "test"}, nil
}

func (f *checkoutPspy) CreatePayment(_ context.Context, _, _ string, in app.PspyPaymentInput) (app.PspyPayment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := app.PspyPayment{ID: fmt.Sprintf("tr_%d", len(f.payments)+1), Mode: "test", Status: "open", Amount: in.Amount,
		SequenceType: in.SequenceType, CustomerID: in.CustomerID, Metadata: in.Metadata, CheckoutURL: "https://pspy.example/pay"}
	f.payments[p.ID] = p
	return p, nil
}

func (f *checkoutPspy) Payment(_ context.Context, _, id string) (app.PspyPayment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[id]
	if !ok {
		return app.PspyPayment{}, &app.ProviderError{Status: 404, Code: "Not Found"}
	}
	return p, nil
}

func (f *checkoutPspy) CreateSubscription(_ context.Context, _, _, customerID string, _ app.PspySubscriptionInput) (app.PspySubscription, error) {
	return app.PspySubscription{ID: "sub_1", CustomerID: customerID, Status: "active"}, nil
}

func (f *checkoutPspy) pay(id string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.payments[id]
	p.Status, p.PaidAt, p.MandateID = "paid", at, "mdt_1"
	f.payments[id] = p
}

// liveTenants knows every tenant and takes every push.
type liveTenants struct{}

func (liveTenants) Apply(context.Context, domain.Account) error { return nil }
func (liveTenants) Tenant(_ context.Context, _, id string) (app.TenantRef, error) {
	return app.TenantRef{ID: id, Name: "Tenant"}, nil
}

// Route 10 learns the payer from the credential only, so the payer reaches the money events only
// if this handler reads it: each case opens a checkout through the handler with one credential,
// pays it through route 4 and reads the money event its payment emitted.
func TestRoute10sCredentialNamesThePayerOfItsMoneyEvents(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	payer := uuid.NewString()
	for _, tc := range []struct {
		name      string
		principal authn.Principal // AppID is filled in
		mode      string
		event     eventsv1.Type
		wantUser  string
		wantPrice func(units, monthly string) string
	}{
		{name: "one-time payment by a tenant access token", principal: authn.Principal{Kind: authn.KindTenantToken, UserID: payer},
			mode: domain.ModePayment, event: billingv1.EventPaymentOneTime, wantUser: payer,
			wantPrice: func(units, _ string) string { return units }}, // the units', not the running subscription's
		{name: "one-time payment by an API key", principal: authn.Principal{Kind: authn.KindAPIKey, KeyType: "write"},
			mode: domain.ModePayment, event: billingv1.EventPaymentOneTime, wantUser: "",
			wantPrice: func(units, _ string) string { return units }},
		{name: "subscription by a tenant access token", principal: authn.Principal{Kind: authn.KindTenantToken, UserID: payer},
			mode: domain.ModeSubscription, event: billingv1.EventSubscriptionStarted, wantUser: payer,
			wantPrice: func(_, monthly string) string { return monthly }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outbox := &events.MemoryOutbox{}
			store := memory.New(outbox)
			py := &checkoutPspy{payments: map[string]app.PspyPayment{}}
			svc, err := app.New(app.Config{Store: store, Tenants: liveTenants{}, Pspy: py, Box: box, Clock: func() time.Time { return now },
				NewID: uuid.NewString, PublicURL: "https://berth.example"})
			if err != nil {
				t.Fatal(err)
			}
			appID, tenantID := uuid.NewString(), uuid.NewString()
			conn, err := svc.CreateConnection(ctx, app.NewConnection{AppID: appID, Provider: "pspy", TestSecretKey: "test_aaaaaaaaaaaaaaaaaaaaaaaaa"})
			if err != nil {
				t.Fatal(err)
			}
			units, err := svc.CreateCatalogPrice(ctx, domain.CatalogPrice{AppID: appID, ProductName: "Credits", Amount: 500, Currency: "EUR"})
			if err != nil {
				t.Fatal(err)
			}
			monthly, err := svc.CreateCatalogPrice(ctx, domain.CatalogPrice{AppID: appID, ProductName: "Pro", Amount: 990, Currency: "EUR", Interval: "1 month"})
			if err != nil {
				t.Fatal(err)
			}
			price := units.ID
			if tc.mode == domain.ModeSubscription {
				price = monthly.ID
			} else {
				// The tenant pays for a subscription already, so a one-time event naming the
				// state's price would name the wrong one.
				if _, err := store.UpdateAccount(ctx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) {
					a.State.Subscribed(domain.Subscription{CustomerID: "cst_1", ID: "sub_0", PriceID: monthly.ID, Quantity: 1, PaidUntil: now.AddDate(0, 1, 0), Test: true})
					return nil, nil
				}); err != nil {
					t.Fatal(err)
				}
			}

			p := tc.principal
			p.AppID = appID
			if p.Kind == authn.KindTenantToken {
				p.TenantID = tenantID
			}
			test := true
			got, err := (&Server{svc: svc}).CreateCheckoutSession(authn.NewContext(ctx, p), &billingv1.CreateCheckoutSessionRequest{
				TenantId: tenantID, Test: &test, Body: &billingv1.CheckoutBody{Price: price, Mode: tc.mode, Quantity: 2,
					PaymentMethodType: "card", State: strings.Repeat("s", 64)}})
			if err != nil {
				t.Fatal(err)
			}
			cs, err := store.Checkout(ctx, got.GetId())
			if err != nil {
				t.Fatal(err)
			}
			if cs.UserID != tc.wantUser {
				t.Fatalf("stored session's payer %q, want %q", cs.UserID, tc.wantUser)
			}

			py.pay(cs.ProviderSessionID, now)
			if _, err := svc.ApplyPspyPayment(ctx, conn.ID, cs.ProviderSessionID); err != nil {
				t.Fatal(err)
			}
			pending, err := outbox.Pending(ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			var found []*billingv1.MoneyChanged
			for _, ev := range pending {
				if ev.Type != tc.event {
					continue
				}
				var m billingv1.MoneyChanged
				if err := ev.Decode(&m); err != nil {
					t.Fatal(err)
				}
				found = append(found, &m)
			}
			if len(found) != 1 {
				t.Fatalf("%d %s events, want 1", len(found), tc.event)
			}
			m := found[0]
			if m.GetUserId() != tc.wantUser || m.GetPaymentId() != cs.ProviderSessionID || m.GetPriceId() != tc.wantPrice(units.ID, monthly.ID) {
				t.Fatalf("%s names user %q payment %q price %q; want %q %q %q", tc.event, m.GetUserId(), m.GetPaymentId(), m.GetPriceId(),
					tc.wantUser, cs.ProviderSessionID, tc.wantPrice(units.ID, monthly.ID))
			}
		})
	}
}
