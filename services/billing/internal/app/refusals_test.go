package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// failingPspx answers every invoice and subscription fetch with err, and a customer fetch with
// customerErr.
type failingPspx struct {
	app.Pspx
	err, customerErr error
}

func (f failingPspx) Customer(_ context.Context, _, id string) (app.PspxCustomer, error) {
	if f.customerErr != nil {
		return app.PspxCustomer{}, f.customerErr
	}
	return app.PspxCustomer{ID: id}, nil
}

func (f failingPspx) Invoice(context.Context, string, string) (app.PspxInvoice, error) {
	return app.PspxInvoice{}, f.err
}

func (f failingPspx) Subscription(context.Context, string, string) (app.PspxSubscription, error) {
	return app.PspxSubscription{}, f.err
}

// failingPspy knows one recurring payment of cst_1's subscription; it answers a fetch of any
// other payment with paymentErr and every subscription fetch with subErr.
type failingPspy struct {
	app.Pspy
	paymentErr, subErr error
}

func (f failingPspy) Payment(_ context.Context, _, id string) (app.PspyPayment, error) {
	if id != "tr_known" {
		return app.PspyPayment{}, f.paymentErr
	}
	return app.PspyPayment{ID: id, Mode: "test", Status: "paid", SequenceType: "recurring", CustomerID: "cst_1", SubscriptionID: "sub_1",
		Amount: app.PspyAmount{Currency: "EUR", Value: "9.90"}, CreatedAt: time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)}, nil
}

func (f failingPspy) Subscription(context.Context, string, string, string) (app.PspySubscription, error) {
	return app.PspySubscription{}, f.subErr
}

var (
	notFound       = &app.ProviderError{Status: 404, Code: "resource_missing", UserMessage: "No such object: 'in_1'"}
	forbidden      = &app.ProviderError{Status: 403, Code: "permission_denied"}
	serverError    = &app.ProviderError{Status: 500, Code: "api_error"}
	rateLimited    = &app.ProviderError{Status: 429, Code: "rate_limit"}
	badRequest     = &app.ProviderError{Status: 400, Code: "invalid_request_error"}
	unauthorized   = &app.ProviderError{Status: 401, Code: "invalid_api_key"}
	errUnreachable = errors.New("pspx: dial tcp: connection refused")
)

// refusalService is billing with a pspx and a pspy connection of one app, each with a customer
// of one tenant that has a subscription.
func refusalService(t *testing.T, px app.Pspx, py app.Pspy) (*app.Service, domain.Connection, domain.Connection) {
	t.Helper()
	ctx := context.Background()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(&events.MemoryOutbox{})
	svc, err := app.New(app.Config{Store: store, Tenants: fakeTenants{}, Pspx: px, Pspy: py, Box: box, NewID: uuid.NewString, PublicURL: "https://berth.example",
		Clock: func() time.Time { return time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	appID, tenant := uuid.NewString(), uuid.NewString()
	pspxConn, err := svc.CreateConnection(ctx, app.NewConnection{AppID: appID, Provider: "pspx", TestSecretKey: "sk_test_aaaaaaaaaaaaaaaaaaaaaaaa"})
	if err != nil {
		t.Fatal(err)
	}
	pspyConn, err := svc.CreateConnection(ctx, app.NewConnection{AppID: appID, Provider: "pspy", TestSecretKey: "test_aaaaaaaaaaaaaaaaaaaaaaaaa"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []domain.Customer{{ID: "cus_1", ConnectionID: pspxConn.ID, AppID: appID, TenantID: tenant, Test: true},
		{ID: "cst_1", ConnectionID: pspyConn.ID, AppID: appID, TenantID: tenant, Test: true}} {
		if _, err := store.SaveCustomer(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.UpdateAccount(ctx, appID, tenant, func(a *domain.Account) ([]events.Event, error) {
		a.State.Subscribed(domain.Subscription{CustomerID: "cus_1", ID: "sub_1", PriceID: "price_1", Quantity: 1,
			PaidUntil: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Test: true})
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return svc, pspxConn, pspyConn
}

func TestAProviderEventWhoseObjectTheProviderRefusesIsRejectedForGoodAndOtherFailuresStayErrors(t *testing.T) {
	type want int
	const (
		rejected  want = iota // Applied.Rejected, no error: the ingest answers 200
		failed                // an error: the ingest answers 500 and the provider delivers again
		ignored               // Applied.Ignored, as before
		succeeded             // no error, nothing rejected
	)
	invoice := `{"id":"in_1","object":"invoice","customer":"cus_1"}`
	subscription := `{"id":"sub_1","object":"subscription","customer":"cus_1"}`
	tests := []struct {
		name      string
		provider  string // pspx: typ and object; pspy: payment
		typ       string
		object    string
		payment   string
		pspxErr   error
		customer  error    // pspx customer fetch
		pspyErrs  [2]error // payment fetch, subscription fetch
		want      want
		wantError string // a part of Rejected
	}{
		{name: "pspx invoice.paid, the invoice does not exist", provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: notFound, want: rejected, wantError: "404 resource_missing"},
		{name: "pspx invoice.paid, the key may not see the invoice", provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: forbidden, want: rejected, wantError: "403"},
		{name: "pspx invoice.voided, the invoice does not exist", provider: "pspx", typ: "invoice.voided", object: invoice, pspxErr: notFound, want: rejected},
		{name: "pspx invoice.marked_uncollectible, the key may not see it", provider: "pspx", typ: "invoice.marked_uncollectible", object: invoice, pspxErr: forbidden, want: rejected},
		{name: "pspx customer.subscription.deleted, the subscription does not exist", provider: "pspx", typ: "customer.subscription.deleted", object: subscription, pspxErr: notFound, want: rejected},
		{name: "pspx event whose data.object names no object", provider: "pspx", typ: "invoice.paid", object: `{"object":"invoice","customer":"cus_1"}`, want: rejected, wantError: "data.object"},
		{name: "pspx invoice missing for a key that does not see the event's customer either (another account's key): an operator can fix it",
			provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: notFound, customer: notFound, want: failed},
		{name: "pspx invoice missing, and the provider unreachable while billing looks for the customer",
			provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: notFound, customer: errUnreachable, want: failed},
		{name: "pspx provider failing (5xx)", provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: serverError, want: failed},
		{name: "pspx provider limiting (429)", provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: rateLimited, want: failed},
		{name: "pspx provider unreachable", provider: "pspx", typ: "customer.subscription.deleted", object: subscription, pspxErr: errUnreachable, want: failed},
		{name: "pspx key refused (401): an operator can fix it", provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: unauthorized, want: failed},
		{name: "pspx request refused for its content (400)", provider: "pspx", typ: "invoice.paid", object: invoice, pspxErr: badRequest, want: failed},
		{name: "pspx event of a type with no effect", provider: "pspx", typ: "price.created", object: `{"id":"price_1"}`, want: succeeded},

		{name: "pspy payment the key may not see", provider: "pspy", payment: "tr_other", pspyErrs: [2]error{forbidden, nil}, want: rejected, wantError: "403"},
		{name: "pspy recurring payment whose subscription does not exist", provider: "pspy", payment: "tr_known", pspyErrs: [2]error{nil, notFound}, want: rejected, wantError: "404"},
		{name: "pspy recurring payment whose subscription the key may not see", provider: "pspy", payment: "tr_known", pspyErrs: [2]error{nil, forbidden}, want: rejected},
		{name: "pspy payment neither key finds is not Berth's, as before", provider: "pspy", payment: "tr_other", pspyErrs: [2]error{notFound, nil}, want: ignored},
		{name: "pspy provider failing (5xx)", provider: "pspy", payment: "tr_other", pspyErrs: [2]error{serverError, nil}, want: failed},
		{name: "pspy provider unreachable while fetching the subscription", provider: "pspy", payment: "tr_known", pspyErrs: [2]error{nil, errUnreachable}, want: failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, pspxConn, pspyConn := refusalService(t, failingPspx{err: tt.pspxErr, customerErr: tt.customer}, failingPspy{paymentErr: tt.pspyErrs[0], subErr: tt.pspyErrs[1]})
			var (
				got app.Applied
				err error
			)
			if tt.provider == "pspx" {
				got, err = svc.ApplyPspxEvent(context.Background(), pspxConn.ID, false, tt.typ, json.RawMessage(tt.object))
			} else {
				got, err = svc.ApplyPspyPayment(context.Background(), pspyConn.ID, tt.payment)
			}
			switch tt.want {
			case rejected:
				if err != nil || got.Rejected == "" || got.Effect != "" || got.Ignored {
					t.Fatalf("got %+v, %v; want a rejection and no error", got, err)
				}
				if !strings.Contains(got.Rejected, tt.wantError) {
					t.Errorf("Rejected = %q, want it to name %q", got.Rejected, tt.wantError)
				}
			case failed:
				if err == nil || got.Rejected != "" {
					t.Fatalf("got %+v, %v; want an error and no rejection", got, err)
				}
			case ignored:
				if err != nil || !got.Ignored || got.Rejected != "" {
					t.Fatalf("got %+v, %v; want ignored", got, err)
				}
			case succeeded:
				if err != nil || got.Rejected != "" {
					t.Fatalf("got %+v, %v; want no error and no rejection", got, err)
				}
			}
		})
	}
}

// rotatingPspx is a provider account change in flight: only newKey sees the customer, and the
// first invoice fetch (with the old key) runs while an operator rotates the connection to newKey.
type rotatingPspx struct {
	app.Pspx
	newKey string
	rotate func()
}

func (p rotatingPspx) Customer(_ context.Context, key, id string) (app.PspxCustomer, error) {
	if key != p.newKey {
		return app.PspxCustomer{}, notFound
	}
	return app.PspxCustomer{ID: id}, nil
}

func (p rotatingPspx) Invoice(_ context.Context, key, _ string) (app.PspxInvoice, error) {
	if key != p.newKey {
		p.rotate()
	}
	return app.PspxInvoice{}, notFound
}

func TestAnOperatorsKeyRotationDuringAnEffectDoesNotRejectItsEventForGood(t *testing.T) {
	const newKey = "sk_test_bbbbbbbbbbbbbbbbbbbbbbbb"
	var (
		svc  *app.Service
		conn domain.Connection
	)
	px := rotatingPspx{newKey: newKey, rotate: func() {
		if _, err := svc.RotateConnectionSecrets(context.Background(), app.SecretRotation{ConnectionID: conn.ID, TestSecretKey: newKey}); err != nil {
			t.Error(err)
		}
	}}
	svc, conn, _ = refusalService(t, px, failingPspy{})
	got, err := svc.ApplyPspxEvent(context.Background(), conn.ID, false, "invoice.paid", json.RawMessage(`{"id":"in_1","object":"invoice","customer":"cus_1"}`))
	if err == nil || got.Rejected != "" {
		t.Fatalf("got %+v, %v; want an error the provider's next delivery can retry, not a rejection", got, err)
	}
}
