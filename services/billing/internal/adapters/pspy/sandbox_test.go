package pspy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/testkit/sandboxproc"
	"github.com/berthhq/berth/services/billing/internal/adapters/pspy"
	"github.com/berthhq/berth/services/billing/internal/app"
)

// The client is tested against the pspy sandbox of a sandbox process shared by the package's
// tests (pkg/testkit/sandboxproc), each in a test-mode account of its own.
func TestMain(m *testing.M) { sandboxproc.Main(m) }

// world is a client talking to the sandbox with a test-mode key of the test's own, and the
// webhook URL its payments name, which tells its notifications apart in the deliveries log.
type world struct {
	t      *testing.T
	sb     *sandboxproc.Sandbox
	key    string
	hook   string
	client *pspy.Client
}

// newWorld runs the test in parallel with the package's other tests that leave the clock alone.
func newWorld(t *testing.T) *world { return worldOn(t, sandboxproc.Parallel(t)) }

// newClockWorld is for a test that advances the sandbox clock, which runs alone (sandboxproc).
func newClockWorld(t *testing.T) *world { return worldOn(t, sandboxproc.Serial(t)) }

func worldOn(t *testing.T, sb *sandboxproc.Sandbox) *world {
	return &world{t: t, sb: sb, key: "test_" + sb.Account(), hook: sb.WebhookURL(),
		client: pspy.New(pspy.Config{BaseURL: sb.PspyURL, Attempts: 3, Backoff: noWait})}
}

// newWorldBehind is newWorld with the client reaching the sandbox through front, which may tamper
// with the traffic: front wraps a proxy to the sandbox process.
func newWorldBehind(t *testing.T, front func(http.Handler) http.Handler) *world {
	w := newWorld(t)
	target, err := url.Parse(w.sb.PspyURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	srv := httptest.NewServer(front(proxy))
	t.Cleanup(srv.Close)
	w.client = pspy.New(pspy.Config{BaseURL: srv.URL, Attempts: 3, Backoff: noWait})
	return w
}

func noWait(int) time.Duration { return time.Millisecond }

// notified is the payments the provider has called the test's webhook URL about so far, oldest
// first, read from the sandbox's deliveries log.
func (w *world) notified() []string {
	w.t.Helper()
	var ids []string
	for _, d := range w.sb.Deliveries("pspy") {
		if d.URL == w.hook {
			ids = append(ids, d.PaymentID)
		}
	}
	return ids
}

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
	cu, err := w.client.CreateCustomer(context.Background(), w.key, "", app.PspyCustomerInput{
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
	p, err := w.client.CreatePayment(ctx, w.key, "", app.PspyPaymentInput{
		Amount: eur("0.01"), Description: "Card check", RedirectURL: "https://berth.example/return",
		WebhookURL: w.hook, SequenceType: "first", CustomerID: customerID,
		Method: []string{"creditcard"},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.pay(p.CheckoutURL, outcome, "creditcard")
	if p, err = w.client.Payment(ctx, w.key, p.ID); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func TestAFirstPaymentPaidOnTheHostedPageEstablishesAMandate(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cu := w.customer()
	if !strings.HasPrefix(cu.ID, "cst_") || cu.Mode != "test" || cu.Name != "Ada Lovelace" || cu.Email != "ada@example.com" || cu.Metadata["tenantId"] != "t1" {
		t.Fatalf("customer %+v", cu)
	}
	p, err := w.client.CreatePayment(ctx, w.key, "op-1", app.PspyPaymentInput{
		Amount: eur("19.00"), Description: "Plan Pro", RedirectURL: "https://berth.example/return?s=1",
		CancelURL: "https://berth.example/cancel", WebhookURL: w.hook,
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
	paid, err := w.client.Payment(ctx, w.key, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if paid.Status != "paid" || paid.PaidAt.IsZero() || paid.MandateID == "" || paid.Method != "directdebit" || paid.CheckoutURL != "" ||
		paid.AmountRefunded != eur("0.00") || paid.RefundsCount != 0 || paid.Mode != "test" || paid.Description != "Plan Pro" {
		t.Fatalf("paid payment %+v", paid)
	}
	mandates, err := w.client.Mandates(ctx, w.key, cu.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mandates) != 1 || mandates[0].ID != paid.MandateID || mandates[0].Method != "directdebit" || mandates[0].Status != "valid" || mandates[0].CreatedAt.IsZero() {
		t.Fatalf("mandates %+v", mandates)
	}
	if n := w.notified(); len(n) != 1 || n[0] != p.ID {
		t.Fatalf("notifications to the payment's webhook URL: %v", n)
	}
}

func TestSubscriptionsRenewOnTheClockPaidOrFailedByTheirMandate(t *testing.T) {
	w := newClockWorld(t)
	ctx := context.Background()
	today := w.sb.Now().Format(time.DateOnly)
	subscribe := func(outcome string) (app.PspyCustomer, app.PspySubscription) {
		cu := w.customer()
		md := w.mandate(cu.ID, outcome).MandateID
		sub, err := w.client.CreateSubscription(ctx, w.key, "sub-"+cu.ID, cu.ID, app.PspySubscriptionInput{
			Amount: eur("25.00"), Interval: "1 month", StartDate: today, Description: "Plan Pro monthly",
			MandateID: md, WebhookURL: w.hook, Metadata: map[string]string{"plan": "pro"},
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
	before := len(w.notified())

	w.sb.Advance(time.Hour)
	statuses := map[string]string{}
	for _, id := range w.notified()[before:] {
		p, err := w.client.Payment(ctx, w.key, id)
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
	renewed, err := w.client.Subscription(ctx, w.key, goodCustomer.ID, good.ID)
	if err != nil || renewed.NextPaymentDate == today || renewed.Status != "active" {
		t.Fatalf("after the renewal: %+v, %v", renewed, err)
	}

	canceled, err := w.client.CancelSubscription(ctx, w.key, goodCustomer.ID, good.ID)
	if err != nil || canceled.Status != "canceled" || canceled.CanceledAt.IsZero() || canceled.NextPaymentDate != "" {
		t.Fatalf("canceled: %+v, %v", canceled, err)
	}
	before = len(w.notified())
	w.sb.Advance(40 * 24 * time.Hour)
	for _, id := range w.notified()[before:] {
		if p, _ := w.client.Payment(ctx, w.key, id); p.SubscriptionID == good.ID {
			t.Fatalf("the canceled subscription charged %+v", p)
		}
	}
	if got, err := w.client.Subscription(ctx, w.key, goodCustomer.ID, good.ID); err != nil || got.Status != "canceled" {
		t.Fatalf("fetched after cancel: %+v, %v", got, err)
	}
}

func TestRefundsAreCountedOnThePayment(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cu := w.customer()
	w.mandate(cu.ID, "paid")
	p, err := w.client.CreatePayment(ctx, w.key, "", app.PspyPaymentInput{
		Amount: eur("30.00"), Description: "Seats", SequenceType: "recurring", CustomerID: cu.ID,
	})
	if err != nil || p.Status != "paid" {
		t.Fatalf("recurring payment %+v, %v", p, err)
	}
	r, err := w.client.CreateRefund(ctx, w.key, "refund-1", p.ID, eur("10.00"), "Goodwill")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "re_") || r.PaymentID != p.ID || r.Status != "pending" || r.Amount != eur("10.00") {
		t.Fatalf("refund %+v", r)
	}
	got, err := w.client.Payment(ctx, w.key, p.ID)
	if err != nil || got.RefundsCount != 1 || got.AmountRefunded != eur("10.00") || got.ChargebacksCount != 0 {
		t.Fatalf("refunded payment %+v, %v", got, err)
	}
}

func TestAChargebackIsReadOffThePayment(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cu := w.customer()
	w.mandate(cu.ID, "paid")
	p, err := w.client.CreatePayment(ctx, w.key, "", app.PspyPaymentInput{
		Amount: eur("30.00"), Description: "Seats", SequenceType: "recurring", CustomerID: cu.ID,
	})
	if err != nil || p.ChargedBack() {
		t.Fatalf("recurring payment %+v, %v", p, err)
	}
	req, _ := http.NewRequest(http.MethodPost, w.sb.PspyURL+"/payments/"+p.ID+"/chargeback", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+w.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("chargeback: %d", res.StatusCode)
	}
	got, err := w.client.Payment(ctx, w.key, p.ID)
	if err != nil || got.Status != "paid" || got.AmountChargedBack != eur("30.00") || got.ChargebacksCount != 1 || !got.ChargedBack() {
		t.Fatalf("charged back payment %+v, %v", got, err)
	}
	// Either sign is enough: the amount alone (a list fetched without embedding) says it too.
	if !(app.PspyPayment{AmountChargedBack: eur("0.01")}).ChargedBack() || (app.PspyPayment{AmountChargedBack: eur("0.00")}).ChargedBack() {
		t.Fatal("ChargedBack misreads the amount")
	}
}

func TestARevokedMandateIsListedInvalid(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cu := w.customer()
	md := w.mandate(cu.ID, "paid").MandateID
	if err := w.client.RevokeMandate(ctx, w.key, cu.ID, md); err != nil {
		t.Fatal(err)
	}
	mandates, err := w.client.Mandates(ctx, w.key, cu.ID)
	if err != nil || len(mandates) != 1 || mandates[0].Status != "invalid" {
		t.Fatalf("mandates %+v, %v", mandates, err)
	}
	var pe *app.ProviderError
	if err := w.client.RevokeMandate(ctx, w.key, cu.ID, "mdt_unknown"); !errors.As(err, &pe) || pe.Status != 404 {
		t.Fatalf("revoking an unknown mandate: %v", err)
	}
}
