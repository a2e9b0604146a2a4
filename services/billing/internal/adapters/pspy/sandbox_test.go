package pspy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/services/billing/internal/adapters/pspy"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/sandbox/clock"
	sandbox "github.com/berthhq/berth/services/sandbox/pspy"
)

const key = "test_dHar4XY7LxsDOtmnkVtjNVWXLSlXsM"

// world is a client talking to a sandbox, optionally through a front that can tamper with the
// traffic.
type world struct {
	t      *testing.T
	base   string
	sb     *sandbox.Server
	clock  *clock.Clock
	client *pspy.Client
}

func newWorld(t *testing.T, front func(http.Handler) http.Handler) *world {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	c := clock.New()
	sb := sandbox.New(sandbox.Config{Clock: c, BaseURL: base})
	var h http.Handler = sb
	if front != nil {
		h = front(sb)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return &world{t: t, base: base, sb: sb, clock: c, client: pspy.New(pspy.Config{BaseURL: base, Attempts: 3, Backoff: noWait})}
}

func noWait(int) time.Duration { return time.Millisecond }

// pay submits the hosted checkout page as a payer would and returns where it sent the payer.
func (w *world) pay(checkoutURL, outcome, method string) string {
	w.t.Helper()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := browser.Get(checkoutURL)
	if err != nil {
		w.t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != 200 {
		w.t.Fatalf("checkout page %d", page.StatusCode)
	}
	resp, err := browser.PostForm(checkoutURL, url.Values{"outcome": {outcome}, "method": {method}})
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		w.t.Fatalf("checkout submission %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

func eur(v string) app.PspyAmount { return app.PspyAmount{Currency: "EUR", Value: v} }

func (w *world) customer() app.PspyCustomer {
	w.t.Helper()
	cu, err := w.client.CreateCustomer(context.Background(), key, "", app.PspyCustomerInput{
		Name: "Ada Lovelace", Email: "ada@example.com", Metadata: map[string]string{"tenantId": "t1"},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return cu
}

// mandate pays a first payment of the customer on the hosted page and returns the payment.
func (w *world) mandate(customerID, outcome string) app.PspyPayment {
	w.t.Helper()
	ctx := context.Background()
	p, err := w.client.CreatePayment(ctx, key, "", app.PspyPaymentInput{
		Amount: eur("0.01"), Description: "Card check", RedirectURL: "https://berth.example/return",
		WebhookURL: "https://berth.example/hooks/pspy", SequenceType: "first", CustomerID: customerID,
		Method: []string{"creditcard"},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.pay(p.CheckoutURL, outcome, "creditcard")
	if p, err = w.client.Payment(ctx, key, p.ID); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func TestAFirstPaymentPaidOnTheHostedPageEstablishesAMandate(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	cu := w.customer()
	if !strings.HasPrefix(cu.ID, "cst_") || cu.Mode != "test" || cu.Name != "Ada Lovelace" || cu.Email != "ada@example.com" || cu.Metadata["tenantId"] != "t1" {
		t.Fatalf("customer %+v", cu)
	}
	p, err := w.client.CreatePayment(ctx, key, "op-1", app.PspyPaymentInput{
		Amount: eur("19.00"), Description: "Plan Pro", RedirectURL: "https://berth.example/return?s=1",
		CancelURL: "https://berth.example/cancel", WebhookURL: "https://berth.example/hooks/pspy",
		SequenceType: "first", CustomerID: cu.ID, Metadata: map[string]string{"checkout": "ck_1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.ID, "tr_") || p.Status != "open" || p.CheckoutURL == "" || p.Amount != eur("19.00") ||
		p.SequenceType != "first" || p.CustomerID != cu.ID || p.Metadata["checkout"] != "ck_1" || p.CreatedAt.IsZero() || !p.PaidAt.IsZero() {
		t.Fatalf("open payment %+v", p)
	}
	if to := w.pay(p.CheckoutURL, "paid", "directdebit"); to != "https://berth.example/return?s=1" {
		t.Fatalf("the page sent the payer to %q", to)
	}
	paid, err := w.client.Payment(ctx, key, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if paid.Status != "paid" || paid.PaidAt.IsZero() || paid.MandateID == "" || paid.Method != "directdebit" || paid.CheckoutURL != "" ||
		paid.AmountRefunded != eur("0.00") || paid.RefundsCount != 0 || paid.Mode != "test" || paid.Description != "Plan Pro" {
		t.Fatalf("paid payment %+v", paid)
	}
	mandates, err := w.client.Mandates(ctx, key, cu.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mandates) != 1 || mandates[0].ID != paid.MandateID || mandates[0].Method != "directdebit" || mandates[0].Status != "valid" || mandates[0].CreatedAt.IsZero() {
		t.Fatalf("mandates %+v", mandates)
	}
	if n := w.sb.Notifications(); len(n) != 1 || n[0].PaymentID != p.ID || n[0].WebhookURL != "https://berth.example/hooks/pspy" {
		t.Fatalf("notifications %+v", n)
	}
}

func TestSubscriptionsRenewOnTheClockPaidOrFailedByTheirMandate(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	today := w.clock.Now().Format(time.DateOnly)
	subscribe := func(outcome string) (app.PspyCustomer, app.PspySubscription) {
		cu := w.customer()
		md := w.mandate(cu.ID, outcome).MandateID
		sub, err := w.client.CreateSubscription(ctx, key, "sub-"+cu.ID, cu.ID, app.PspySubscriptionInput{
			Amount: eur("25.00"), Interval: "1 month", StartDate: today, Description: "Plan Pro monthly",
			MandateID: md, WebhookURL: "https://berth.example/hooks/pspy", Metadata: map[string]string{"plan": "pro"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sub.ID, "sub_") || sub.Status != "active" || sub.CustomerID != cu.ID || sub.MandateID != md ||
			sub.StartDate != today || sub.NextPaymentDate != today || sub.Interval != "1 month" || sub.Amount != eur("25.00") ||
			sub.Mode != "test" || sub.Metadata["plan"] != "pro" || !sub.CanceledAt.IsZero() {
			t.Fatalf("subscription %+v", sub)
		}
		return cu, sub
	}
	goodCustomer, good := subscribe("paid")
	_, bad := subscribe("paid-recurring-fails")
	before := len(w.sb.Notifications())

	w.clock.Advance(ctx, time.Hour)
	statuses := map[string]string{}
	for _, n := range w.sb.Notifications()[before:] {
		p, err := w.client.Payment(ctx, key, n.PaymentID)
		if err != nil {
			t.Fatal(err)
		}
		if p.SequenceType != "recurring" || p.Amount != eur("25.00") || p.CheckoutURL != "" {
			t.Fatalf("renewal %+v", p)
		}
		statuses[p.SubscriptionID] = p.Status
	}
	if len(statuses) != 2 || statuses[good.ID] != "paid" || statuses[bad.ID] != "failed" {
		t.Fatalf("renewals by subscription %v", statuses)
	}
	renewed, err := w.client.Subscription(ctx, key, goodCustomer.ID, good.ID)
	if err != nil || renewed.NextPaymentDate == today || renewed.Status != "active" {
		t.Fatalf("after the renewal: %+v, %v", renewed, err)
	}

	canceled, err := w.client.CancelSubscription(ctx, key, goodCustomer.ID, good.ID)
	if err != nil || canceled.Status != "canceled" || canceled.CanceledAt.IsZero() || canceled.NextPaymentDate != "" {
		t.Fatalf("canceled: %+v, %v", canceled, err)
	}
	before = len(w.sb.Notifications())
	w.clock.Advance(ctx, 40*24*time.Hour)
	for _, n := range w.sb.Notifications()[before:] {
		if p, _ := w.client.Payment(ctx, key, n.PaymentID); p.SubscriptionID == good.ID {
			t.Fatalf("the canceled subscription charged %+v", p)
		}
	}
	if got, err := w.client.Subscription(ctx, key, goodCustomer.ID, good.ID); err != nil || got.Status != "canceled" {
		t.Fatalf("fetched after cancel: %+v, %v", got, err)
	}
}

func TestRefundsAreCountedOnThePayment(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	cu := w.customer()
	w.mandate(cu.ID, "paid")
	p, err := w.client.CreatePayment(ctx, key, "", app.PspyPaymentInput{
		Amount: eur("30.00"), Description: "Seats", SequenceType: "recurring", CustomerID: cu.ID,
	})
	if err != nil || p.Status != "paid" {
		t.Fatalf("recurring payment %+v, %v", p, err)
	}
	r, err := w.client.CreateRefund(ctx, key, "refund-1", p.ID, eur("10.00"), "Goodwill")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "re_") || r.PaymentID != p.ID || r.Status != "pending" || r.Amount != eur("10.00") {
		t.Fatalf("refund %+v", r)
	}
	got, err := w.client.Payment(ctx, key, p.ID)
	if err != nil || got.RefundsCount != 1 || got.AmountRefunded != eur("10.00") || got.ChargebacksCount != 0 {
		t.Fatalf("refunded payment %+v, %v", got, err)
	}
}

func TestAChargebackIsReadOffThePayment(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	cu := w.customer()
	w.mandate(cu.ID, "paid")
	p, err := w.client.CreatePayment(ctx, key, "", app.PspyPaymentInput{
		Amount: eur("30.00"), Description: "Seats", SequenceType: "recurring", CustomerID: cu.ID,
	})
	if err != nil || p.ChargedBack() {
		t.Fatalf("recurring payment %+v, %v", p, err)
	}
	req, _ := http.NewRequest(http.MethodPost, w.base+"/payments/"+p.ID+"/chargeback", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("chargeback: %d", res.StatusCode)
	}
	got, err := w.client.Payment(ctx, key, p.ID)
	if err != nil || got.Status != "paid" || got.AmountChargedBack != eur("30.00") || got.ChargebacksCount != 1 || !got.ChargedBack() {
		t.Fatalf("charged back payment %+v, %v", got, err)
	}
	// Either sign is enough: the amount alone (a list fetched without embedding) says it too.
	if !(app.PspyPayment{AmountChargedBack: eur("0.01")}).ChargedBack() || (app.PspyPayment{AmountChargedBack: eur("0.00")}).ChargedBack() {
		t.Fatal("ChargedBack misreads the amount")
	}
}

func TestARevokedMandateIsListedInvalid(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	cu := w.customer()
	md := w.mandate(cu.ID, "paid").MandateID
	if err := w.client.RevokeMandate(ctx, key, cu.ID, md); err != nil {
		t.Fatal(err)
	}
	mandates, err := w.client.Mandates(ctx, key, cu.ID)
	if err != nil || len(mandates) != 1 || mandates[0].Status != "invalid" {
		t.Fatalf("mandates %+v, %v", mandates, err)
	}
	var pe *app.ProviderError
	if err := w.client.RevokeMandate(ctx, key, cu.ID, "mdt_unknown"); !errors.As(err, &pe) || pe.Status != 404 {
		t.Fatalf("revoking an unknown mandate: %v", err)
	}
}
