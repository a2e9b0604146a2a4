package pspx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/testkit/sandboxproc"
	"github.com/berthhq/berth/services/billing/internal/adapters/pspx"
	"github.com/berthhq/berth/services/billing/internal/app"
)

// The client is tested against the pspx sandbox of a sandbox process shared by the package's
// tests (pkg/testkit/sandboxproc), each in a test-mode account of its own.
func TestMain(m *testing.M) { sandboxproc.Main(m) }

// world is the client against the sandbox, with a test-mode key of the test's own.
type world struct {
	t   *testing.T
	ctx context.Context
	c   *pspx.Client
	sb  *sandboxproc.Sandbox
	key string
	n   int // idempotency keys handed out
}

// newWorld runs the test in parallel with the package's other tests that leave the clock alone.
func newWorld(t *testing.T) *world { return worldOn(t, sandboxproc.Parallel(t)) }

// newClockWorld is for a test that advances the sandbox clock, which runs alone (sandboxproc).
func newClockWorld(t *testing.T) *world { return worldOn(t, sandboxproc.Serial(t)) }

func worldOn(t *testing.T, sb *sandboxproc.Sandbox) *world {
	return &world{t: t, ctx: context.Background(), sb: sb, key: "sk_test_" + sb.Account(),
		c: pspx.New(pspx.Config{BaseURL: sb.PspxURL, Backoff: func(int) time.Duration { return time.Millisecond }})}
}

// advanceTo moves the sandbox clock to an hour past at: a renewal drafted at a period's end is
// finalized and charged an hour later (the provider's draft window).
func (w *world) advanceTo(at time.Time) {
	w.t.Helper()
	w.sb.Advance(at.Sub(w.sb.Now()) + time.Hour)
}

// createdCustomers counts the account's customer.created events, read from the provider's
// events list as a merchant would.
func (w *world) createdCustomers() int {
	t := w.t
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.sb.PspxURL+"/v1/events?type=customer.created&limit=100", nil)
	req.Header.Set("Authorization", "Bearer "+w.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Data    []json.RawMessage `json:"data"`
		HasMore bool              `json:"has_more"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.StatusCode != http.StatusOK || list.HasMore {
		t.Fatalf("events list: %d, has_more %v, %v", res.StatusCode, list.HasMore, err)
	}
	return len(list.Data)
}

// idem is a fresh idempotency key, as Berth derives one per operation.
func (w *world) idem() string {
	w.n++
	return fmt.Sprintf("op-%d", w.n)
}

// must(call())(t) fails the test on the call's error and returns its value.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// plan creates a product, a monthly price of 10.00 EUR and a 19 % exclusive tax rate.
func (w *world) plan() (app.PspxPrice, app.PspxTaxRate) {
	t := w.t
	t.Helper()
	prod := must(w.c.CreateProduct(w.ctx, w.key, w.idem(), "Pro plan"))(t)
	price := must(w.c.CreatePrice(w.ctx, w.key, w.idem(), app.PspxPriceInput{Product: prod, UnitAmount: 1000, Currency: "eur", Interval: "month"}))(t)
	tax := must(w.c.CreateTaxRate(w.ctx, w.key, w.idem(), app.PspxTaxRateInput{DisplayName: "VAT", Percentage: 19, Country: "DE"}))(t)
	return price, tax
}

func (w *world) customer() app.PspxCustomer {
	w.t.Helper()
	return must(w.c.CreateCustomer(w.ctx, w.key, w.idem(), app.PspxCustomerInput{
		Email: "ada@example.com", Name: "Ada", Metadata: map[string]string{"tenantId": "t1", "appId": "a1", "host": "app.example"},
	}))(w.t)
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// complete fills in the hosted page like a payer and follows it back to the success URL.
func (w *world) complete(s app.PspxCheckoutSession, fields ...string) {
	t := w.t
	t.Helper()
	page, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(html), "<form") {
		t.Fatalf("hosted page %d:\n%s", page.StatusCode, html)
	}
	form := url.Values{}
	for i := 0; i+1 < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	resp, err := noRedirects.PostForm(s.URL, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "https://app.example/return?session=" + s.ID; resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Fatalf("completion answered %d to %q, want 303 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

func card(number string) []string {
	return []string{"card_number", number, "card_expiry", "12/39", "card_cvc", "123"}
}

func (w *world) checkout(in app.PspxCheckoutInput) app.PspxCheckoutSession {
	w.t.Helper()
	in.SuccessURL, in.CancelURL = "https://app.example/return?session={CHECKOUT_SESSION_ID}", "https://app.example/cancel"
	return must(w.c.CreateCheckoutSession(w.ctx, w.key, w.idem(), in))(w.t)
}

// savedCard attaches a card through a setup checkout and returns its payment method id.
func (w *world) savedCard(customer, number string) string {
	w.t.Helper()
	s := w.checkout(app.PspxCheckoutInput{Customer: customer, Mode: "setup", Currency: "eur", PaymentMethodType: "card"})
	w.complete(s, card(number)...)
	done := must(w.c.CheckoutSession(w.ctx, w.key, s.ID))(w.t)
	if done.SetupIntent == nil || done.SetupIntent.Status != "succeeded" || done.SetupIntent.PaymentMethod == "" {
		w.t.Fatalf("setup session: %+v", done)
	}
	return done.SetupIntent.PaymentMethod
}

func TestCatalogAndCustomersRoundTripAndUnknownIdsAreCallerFaults(t *testing.T) {
	w := newWorld(t)
	prod := must(w.c.CreateProduct(w.ctx, w.key, w.idem(), "Seats"))(t)
	price := must(w.c.CreatePrice(w.ctx, w.key, w.idem(), app.PspxPriceInput{Product: prod, UnitAmount: 2500, Currency: "eur", Interval: "month", IntervalCount: 3}))(t)
	got := must(w.c.Price(w.ctx, w.key, price.ID))(t)
	if got != (app.PspxPrice{ID: price.ID, Product: prod, UnitAmount: 2500, Currency: "eur", Type: "recurring", Interval: "month", IntervalCount: 3, Active: true}) {
		t.Fatalf("price %+v", got)
	}
	tax := must(w.c.CreateTaxRate(w.ctx, w.key, w.idem(), app.PspxTaxRateInput{DisplayName: "MwSt", Percentage: 7.25, Inclusive: true, Country: "DE"}))(t)
	if gotTax := must(w.c.TaxRate(w.ctx, w.key, tax.ID))(t); gotTax != (app.PspxTaxRate{ID: tax.ID, DisplayName: "MwSt", Percentage: 7.25, Inclusive: true, Active: true}) {
		t.Fatalf("tax rate %+v", gotTax)
	}
	cus := w.customer()
	if again := must(w.c.Customer(w.ctx, w.key, cus.ID))(t); again.Email != "ada@example.com" || again.Metadata["host"] != "app.example" || again.Livemode {
		t.Fatalf("customer %+v", again)
	}
	_, err := w.c.Price(w.ctx, w.key, "price_missing")
	var pe *app.ProviderError
	if !errors.As(err, &pe) || pe.Status != 404 || pe.Code != "resource_missing" || !pe.CallerFault() {
		t.Fatalf("unknown price: %v", err)
	}
	if _, err := w.c.Customer(w.ctx, "sk_test_"+w.sb.Account(), cus.ID); !errors.As(err, &pe) || pe.Status != 404 {
		t.Fatalf("another account's customer: %v", err)
	}
	if _, err := w.c.Customer(w.ctx, "sk_nonsense", cus.ID); !errors.As(err, &pe) || pe.Status != 401 || pe.CallerFault() {
		t.Fatalf("bad key: %v", err)
	}
	live := must(w.c.CreateCustomer(w.ctx, "sk_live_"+w.sb.Account(), w.idem(), app.PspxCustomerInput{Email: "x@example.com"}))(t)
	if !live.Livemode {
		t.Fatal("a live key made a test customer")
	}
}

func TestASubscriptionCheckoutCompletedOnTheHostedPageReadsBackExpanded(t *testing.T) {
	w := newWorld(t)
	price, tax := w.plan()
	cus := w.customer()
	meta := map[string]string{"tenantId": "t1"}
	s := w.checkout(app.PspxCheckoutInput{Customer: cus.ID, Mode: "subscription", Price: price.ID, Quantity: 2, TaxRate: tax.ID,
		PaymentMethodType: "card", ClientReferenceID: "t1", Metadata: meta})
	if s.Status != "open" || s.URL == "" || s.AmountTotal != 2380 || s.Currency != "eur" || s.Created.IsZero() {
		t.Fatalf("new session %+v", s)
	}
	w.complete(s, card("4242 4242 4242 4242")...)
	done := must(w.c.CheckoutSession(w.ctx, w.key, s.ID))(t)
	sub := done.Subscription
	if done.Status != "complete" || done.PaymentStatus != "paid" || done.URL != "" || sub == nil || done.Metadata["tenantId"] != "t1" {
		t.Fatalf("completed %+v", done)
	}
	if sub.Status != "active" || sub.Price != price.ID || sub.Product != price.Product || sub.Quantity != 2 || sub.ItemID == "" ||
		sub.Metadata["tenantId"] != "t1" || sub.DefaultPayment == "" || sub.Customer != cus.ID ||
		!sub.CurrentPeriodEnd.Equal(sub.CurrentPeriodStart.AddDate(0, 1, 0)) {
		t.Fatalf("subscription %+v", sub)
	}
	if again := must(w.c.Subscription(w.ctx, w.key, sub.ID))(t); again.LatestInvoice != sub.LatestInvoice || again.Status != "active" {
		t.Fatalf("subscription read back %+v", again)
	}
	methods := must(w.c.PaymentMethods(w.ctx, w.key, cus.ID))(t)
	if len(methods) != 1 || methods[0] != sub.DefaultPayment {
		t.Fatalf("payment methods %v", methods)
	}
	inv := must(w.c.Invoice(w.ctx, w.key, sub.LatestInvoice))(t)
	if inv.Status != "paid" || inv.BillingReason != "subscription_create" || inv.AmountPaid != 2380 || inv.Subscription != sub.ID ||
		!strings.Contains(string(inv.Raw), `"object": "invoice"`) {
		t.Fatalf("first invoice %+v", inv)
	}
	pi := must(w.c.PaymentIntent(w.ctx, w.key, inv.PaymentIntent))(t)
	if !strings.Contains(string(pi), `"status": "succeeded"`) || !strings.Contains(string(pi), `"object": "payment_intent"`) {
		t.Fatalf("payment intent %s", pi)
	}
}

func TestPaymentModeCheckoutReadsBackItsPaymentIntent(t *testing.T) {
	w := newWorld(t)
	prod := must(w.c.CreateProduct(w.ctx, w.key, w.idem(), "Credits"))(t)
	price := must(w.c.CreatePrice(w.ctx, w.key, w.idem(), app.PspxPriceInput{Product: prod, UnitAmount: 4900, Currency: "eur"}))(t)
	cus := w.customer()
	s := w.checkout(app.PspxCheckoutInput{Customer: cus.ID, Mode: "payment", Price: price.ID, BillingAddressCollection: true,
		Metadata: map[string]string{"tenantId": "t1"}})
	w.complete(s, append(card("4242424242424242"), "name", "Ada", "address_line1", "Main St 1", "address_postal_code", "10115",
		"address_city", "Berlin", "address_country", "DE")...)
	done := must(w.c.CheckoutSession(w.ctx, w.key, s.ID))(t)
	if pi := done.PaymentIntent; pi == nil || pi.Status != "succeeded" || pi.Amount != 4900 || pi.Currency != "eur" || pi.PaymentMethod == "" || pi.Created.IsZero() {
		t.Fatalf("payment intent %+v", done.PaymentIntent)
	}
	if done.Subscription != nil || done.SetupIntent != nil {
		t.Fatalf("payment session expanded other objects: %+v", done)
	}
}

func TestRenewalsOnClockAdvancePaidThenDeclinedThenPaidByHand(t *testing.T) {
	w := newClockWorld(t)
	price, tax := w.plan()
	cus := w.customer()
	good := w.savedCard(cus.ID, "4242424242424242")
	if c := must(w.c.SetDefaultPaymentMethod(w.ctx, w.key, w.idem(), cus.ID, good))(t); c.DefaultPaymentMethod != good {
		t.Fatalf("default %+v", c)
	}
	sub := must(w.c.CreateSubscription(w.ctx, w.key, w.idem(), app.PspxSubscriptionInput{Customer: cus.ID, Price: price.ID, TaxRate: tax.ID, Metadata: map[string]string{"tenantId": "t1"}}))(t)
	if sub.Status != "active" {
		t.Fatalf("new subscription %+v", sub)
	}

	w.advanceTo(sub.CurrentPeriodEnd)
	renewed := must(w.c.Subscription(w.ctx, w.key, sub.ID))(t)
	page := must(w.c.ListInvoices(w.ctx, w.key, app.PspxInvoiceQuery{Customer: cus.ID, Limit: 1}))(t)
	if renewed.Status != "active" || !renewed.CurrentPeriodStart.Equal(sub.CurrentPeriodEnd) || len(page.Invoices) != 1 || !page.HasMore ||
		page.Invoices[0].BillingReason != "subscription_cycle" || page.Invoices[0].Status != "paid" || page.Invoices[0].AmountPaid != 1190 ||
		!page.Invoices[0].PeriodEnd.Equal(sub.CurrentPeriodEnd) {
		t.Fatalf("after a paid renewal: %+v\n%+v", renewed, page)
	}

	declining := w.savedCard(cus.ID, "4000 0000 0000 0341")
	must(w.c.SetDefaultPaymentMethod(w.ctx, w.key, w.idem(), cus.ID, declining))(t)
	sub = renewed
	w.advanceTo(sub.CurrentPeriodEnd)
	pastDue := must(w.c.Subscription(w.ctx, w.key, sub.ID))(t)
	open := must(w.c.Invoice(w.ctx, w.key, pastDue.LatestInvoice))(t)
	if pastDue.Status != "past_due" || open.Status != "open" || open.AmountPaid != 0 {
		t.Fatalf("after a declined renewal: %+v\n%+v", pastDue, open)
	}
	_, err := w.c.PayInvoice(w.ctx, w.key, w.idem(), open.ID, "")
	var pe *app.ProviderError
	if !errors.As(err, &pe) || pe.Status != 402 || pe.Code != "card_declined" || !pe.CallerFault() {
		t.Fatalf("paying with the declining default: %v", err)
	}
	paid := must(w.c.PayInvoice(w.ctx, w.key, w.idem(), open.ID, good))(t)
	if now := must(w.c.Subscription(w.ctx, w.key, sub.ID))(t); paid.Status != "paid" || now.Status != "active" || !now.CurrentPeriodStart.Equal(sub.CurrentPeriodEnd) {
		t.Fatalf("after paying by hand: %+v\n%+v", paid, now)
	}
	must(w.c.SetDefaultPaymentMethod(w.ctx, w.key, w.idem(), cus.ID, ""))(t)
	if err := w.c.DetachPaymentMethod(w.ctx, w.key, w.idem(), declining); err != nil {
		t.Fatal(err)
	}
	if methods := must(w.c.PaymentMethods(w.ctx, w.key, cus.ID))(t); len(methods) != 1 || methods[0] != good {
		t.Fatalf("methods after the detach: %v", methods)
	}
	if c := must(w.c.Customer(w.ctx, w.key, cus.ID))(t); c.DefaultPaymentMethod != "" {
		t.Fatalf("default not cleared: %+v", c)
	}
}

func TestUpdatingASubscriptionsPriceAndCancellation(t *testing.T) {
	w := newClockWorld(t)
	price, tax := w.plan()
	cus := w.customer()
	pm := w.savedCard(cus.ID, "4242424242424242")
	sub := must(w.c.CreateSubscription(w.ctx, w.key, w.idem(), app.PspxSubscriptionInput{Customer: cus.ID, Price: price.ID, TaxRate: tax.ID, DefaultPaymentMethod: pm}))(t)
	bigger := must(w.c.CreatePrice(w.ctx, w.key, w.idem(), app.PspxPriceInput{Product: price.Product, UnitAmount: 3000, Currency: "eur", Interval: "month"}))(t)
	yes := true
	upd := must(w.c.UpdateSubscription(w.ctx, w.key, w.idem(), sub.ID, app.PspxSubscriptionUpdate{
		ItemID: sub.ItemID, Price: bigger.ID, Quantity: 2, ProrationBehavior: "always_invoice", CancelAtPeriodEnd: &yes, Metadata: map[string]string{"plan": "big"},
	}))(t)
	if upd.Price != bigger.ID || upd.Quantity != 2 || !upd.CancelAtPeriodEnd || !upd.CancelAt.Equal(upd.CurrentPeriodEnd) || upd.CanceledAt.IsZero() ||
		upd.Metadata["plan"] != "big" || upd.DefaultPayment != pm || upd.LatestInvoice == sub.LatestInvoice {
		t.Fatalf("updated %+v", upd)
	}
	if inv := must(w.c.Invoice(w.ctx, w.key, upd.LatestInvoice))(t); inv.BillingReason != "subscription_update" || inv.Status != "paid" {
		t.Fatalf("proration invoice %+v", inv)
	}
	w.advanceTo(upd.CurrentPeriodEnd)
	if ended := must(w.c.Subscription(w.ctx, w.key, sub.ID))(t); ended.Status != "canceled" {
		t.Fatalf("at the period end %+v", ended)
	}
	_, err := w.c.UpdateSubscription(w.ctx, w.key, w.idem(), sub.ID, app.PspxSubscriptionUpdate{CancelAtPeriodEnd: &yes})
	var pe *app.ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || !pe.CallerFault() {
		t.Fatalf("updating a canceled subscription: %v", err)
	}
}

func TestManualInvoicesCollectPendingItemsAndPageNewestFirst(t *testing.T) {
	w := newWorld(t)
	cus := w.customer()
	prod := must(w.c.CreateProduct(w.ctx, w.key, w.idem(), "Setup fee"))(t)
	fee := must(w.c.CreatePrice(w.ctx, w.key, w.idem(), app.PspxPriceInput{Product: prod, UnitAmount: 5000, Currency: "eur"}))(t)
	pm := w.savedCard(cus.ID, "4242424242424242")
	if err := w.c.CreateInvoiceItem(w.ctx, w.key, w.idem(), app.PspxInvoiceItemInput{Customer: cus.ID, Price: fee.ID, Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	inv := must(w.c.CreateInvoice(w.ctx, w.key, w.idem(), app.PspxInvoiceInput{Customer: cus.ID, Footer: "Thanks", DefaultPaymentMethod: pm,
		Metadata: map[string]string{"order": "o1"}, PendingItemsBehavior: "include"}))(t)
	if inv.Status != "draft" || inv.AmountDue != 10000 || inv.BillingReason != "manual" || inv.Metadata["order"] != "o1" {
		t.Fatalf("draft %+v", inv)
	}
	if err := w.c.CreateInvoiceItem(w.ctx, w.key, w.idem(), app.PspxInvoiceItemInput{Customer: cus.ID, Price: fee.ID, Invoice: inv.ID}); err != nil {
		t.Fatal(err)
	}
	open := must(w.c.FinalizeInvoice(w.ctx, w.key, w.idem(), inv.ID))(t)
	if open.Status != "open" || open.AmountDue != 15000 {
		t.Fatalf("finalized %+v", open)
	}
	if paid := must(w.c.PayInvoice(w.ctx, w.key, w.idem(), inv.ID, ""))(t); paid.Status != "paid" || paid.AmountPaid != 15000 || paid.PaymentIntent == "" {
		t.Fatalf("paid %+v", paid)
	}
	var ids []string // oldest first
	ids = append(ids, inv.ID)
	for range 3 {
		next := must(w.c.CreateInvoice(w.ctx, w.key, w.idem(), app.PspxInvoiceInput{Customer: cus.ID}))(t)
		ids = append(ids, next.ID)
	}
	if err := w.c.CreateInvoiceItem(w.ctx, w.key, w.idem(), app.PspxInvoiceItemInput{Customer: cus.ID, Price: fee.ID, Invoice: ids[3]}); err != nil {
		t.Fatal(err)
	}
	must(w.c.FinalizeInvoice(w.ctx, w.key, w.idem(), ids[3]))(t)
	voided := must(w.c.VoidInvoice(w.ctx, w.key, w.idem(), ids[3]))(t)
	if voided.Status != "void" {
		t.Fatalf("voided %+v", voided)
	}
	first := must(w.c.ListInvoices(w.ctx, w.key, app.PspxInvoiceQuery{Customer: cus.ID, Limit: 2}))(t)
	second := must(w.c.ListInvoices(w.ctx, w.key, app.PspxInvoiceQuery{Customer: cus.ID, Limit: 2, StartingAfter: first.Invoices[1].ID}))(t)
	back := must(w.c.ListInvoices(w.ctx, w.key, app.PspxInvoiceQuery{Customer: cus.ID, Limit: 2, EndingBefore: second.Invoices[0].ID}))(t)
	got := func(p app.PspxInvoicePage) string {
		var s []string
		for _, inv := range p.Invoices {
			s = append(s, inv.ID)
		}
		return strings.Join(s, ",")
	}
	if got(first) != ids[3]+","+ids[2] || !first.HasMore || got(second) != ids[1]+","+ids[0] || second.HasMore || got(back) != got(first) || back.HasMore {
		t.Fatalf("pages %s (%v) / %s (%v) / %s (%v); ids %v", got(first), first.HasMore, got(second), second.HasMore, got(back), back.HasMore, ids)
	}
}

func TestTheSameIdempotencyKeyNeverCreatesTwice(t *testing.T) {
	w := newWorld(t)
	in := app.PspxCustomerInput{Email: "ada@example.com"}
	a := must(w.c.CreateCustomer(w.ctx, w.key, "op-1", in))(t)
	b := must(w.c.CreateCustomer(w.ctx, w.key, "op-1", in))(t)
	if a.ID != b.ID {
		t.Fatalf("same key, two customers: %s %s", a.ID, b.ID)
	}
	var pe *app.ProviderError
	if _, err := w.c.CreateCustomer(w.ctx, w.key, "op-1", app.PspxCustomerInput{Email: "eve@example.com"}); !errors.As(err, &pe) || pe.Code != "idempotency_error" {
		t.Fatalf("same key, other params: %v", err)
	}

	// The first attempt reaches the provider but its answer is lost (a 503 in its place): the
	// retry carries the same key and gets the stored answer instead of a second customer.
	var mu sync.Mutex
	var keys []string
	target, _ := url.Parse(w.sb.PspxURL)
	flaky := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		first := len(keys) == 1
		mu.Unlock()
		out, _ := http.NewRequest(r.Method, target.String()+r.URL.RequestURI(), strings.NewReader(string(body)))
		out.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if first {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(resp.StatusCode)
		_, _ = rw.Write(answer)
	}))
	defer flaky.Close()
	c := pspx.New(pspx.Config{BaseURL: flaky.URL, Backoff: func(int) time.Duration { return time.Millisecond }})
	got := must(c.CreateCustomer(w.ctx, w.key, "op-2", app.PspxCustomerInput{Email: "bob@example.com"}))(t)
	created := w.createdCustomers()
	if len(keys) != 2 || keys[0] != "op-2" || keys[1] != "op-2" || created != 2 || got.Email != "bob@example.com" {
		t.Fatalf("keys %v, %d customers created in all (want 2: op-1 and op-2)", keys, created)
	}
}
