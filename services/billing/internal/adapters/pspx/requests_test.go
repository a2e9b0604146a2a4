package pspx_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/services/billing/internal/adapters/pspx"
	"github.com/berthhq/berth/services/billing/internal/app"
)

const testKey = "sk_test_requestshape1"

// recorder answers every request with one canned body and records the last request.
type recorder struct {
	mu     sync.Mutex
	status int
	answer string
	req    *http.Request
	body   string
	n      int
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.req, rec.body = r, string(b)
	rec.n++
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.status)
	_, _ = io.WriteString(w, rec.answer)
}

func stub(t *testing.T, status int, answer string) (*pspx.Client, *recorder) {
	t.Helper()
	rec := &recorder{status: status, answer: answer}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return pspx.New(pspx.Config{BaseURL: srv.URL, Attempts: 2, Backoff: func(int) time.Duration { return time.Millisecond }}), rec
}

func ptr[T any](v T) *T { return &v }

func TestEachCallSendsTheProvidersExactRequest(t *testing.T) {
	ctx := context.Background()
	const idem = "op-42"
	obj := func(kind, id string) string { return `{"object":"` + kind + `","id":"` + id + `"}` }
	list := func(kind string) string {
		return `{"object":"list","data":[` + obj(kind, "x_1") + `],"has_more":false}`
	}
	cases := []struct {
		name   string
		answer string
		call   func(c *pspx.Client) error
		method string
		path   string
		params url.Values // the form of a POST, the query of a GET
	}{
		{"create customer", obj("customer", "cus_1"), func(c *pspx.Client) error {
			_, err := c.CreateCustomer(ctx, testKey, idem, app.PspxCustomerInput{Email: "a@b.c", Name: "Ada", Metadata: map[string]string{"tenantId": "t1", "appId": "a1", "host": "h"}})
			return err
		}, "POST", "/v1/customers", url.Values{"email": {"a@b.c"}, "name": {"Ada"}, "metadata[tenantId]": {"t1"}, "metadata[appId]": {"a1"}, "metadata[host]": {"h"}}},
		{"customer", obj("customer", "cus_1"), func(c *pspx.Client) error { _, err := c.Customer(ctx, testKey, "cus_1"); return err },
			"GET", "/v1/customers/cus_1", url.Values{}},
		{"set default method", obj("customer", "cus_1"), func(c *pspx.Client) error {
			_, err := c.SetDefaultPaymentMethod(ctx, testKey, idem, "cus_1", "pm_1")
			return err
		}, "POST", "/v1/customers/cus_1", url.Values{"invoice_settings[default_payment_method]": {"pm_1"}}},
		{"clear default method", obj("customer", "cus_1"), func(c *pspx.Client) error {
			_, err := c.SetDefaultPaymentMethod(ctx, testKey, idem, "cus_1", "")
			return err
		}, "POST", "/v1/customers/cus_1", url.Values{"invoice_settings[default_payment_method]": {""}}},
		{"price", obj("price", "price_1"), func(c *pspx.Client) error { _, err := c.Price(ctx, testKey, "price_1"); return err },
			"GET", "/v1/prices/price_1", url.Values{}},
		{"tax rate", obj("tax_rate", "txr_1"), func(c *pspx.Client) error { _, err := c.TaxRate(ctx, testKey, "txr_1"); return err },
			"GET", "/v1/tax_rates/txr_1", url.Values{}},
		{"create product", obj("product", "prod_1"), func(c *pspx.Client) error { _, err := c.CreateProduct(ctx, testKey, idem, "Pro"); return err },
			"POST", "/v1/products", url.Values{"name": {"Pro"}}},
		{"create recurring price", obj("price", "price_1"), func(c *pspx.Client) error {
			_, err := c.CreatePrice(ctx, testKey, idem, app.PspxPriceInput{Product: "prod_1", UnitAmount: 1000, Currency: "eur", Interval: "month", IntervalCount: 3})
			return err
		}, "POST", "/v1/prices", url.Values{"product": {"prod_1"}, "unit_amount": {"1000"}, "currency": {"eur"}, "recurring[interval]": {"month"}, "recurring[interval_count]": {"3"}}},
		{"create one-time free price", obj("price", "price_1"), func(c *pspx.Client) error {
			_, err := c.CreatePrice(ctx, testKey, idem, app.PspxPriceInput{Product: "prod_1", Currency: "eur"})
			return err
		}, "POST", "/v1/prices", url.Values{"product": {"prod_1"}, "unit_amount": {"0"}, "currency": {"eur"}}},
		{"create tax rate", obj("tax_rate", "txr_1"), func(c *pspx.Client) error {
			_, err := c.CreateTaxRate(ctx, testKey, idem, app.PspxTaxRateInput{DisplayName: "VAT", Percentage: 19, Country: "DE"})
			return err
		}, "POST", "/v1/tax_rates", url.Values{"display_name": {"VAT"}, "percentage": {"19"}, "inclusive": {"false"}, "country": {"DE"}}},
		{"create subscription checkout", obj("checkout.session", "cs_1"), func(c *pspx.Client) error {
			_, err := c.CreateCheckoutSession(ctx, testKey, idem, app.PspxCheckoutInput{
				Customer: "cus_1", Mode: "subscription", Price: "price_1", Quantity: 2, TaxRate: "txr_1", PaymentMethodType: "card",
				BillingAddressCollection: true, AllowedCountry: "DE", SuccessURL: "https://a.example/ok?cs={CHECKOUT_SESSION_ID}",
				CancelURL: "https://a.example/no", ClientReferenceID: "ref", Metadata: map[string]string{"tenantId": "t1"},
			})
			return err
		}, "POST", "/v1/checkout/sessions", url.Values{
			"customer": {"cus_1"}, "mode": {"subscription"}, "line_items[0][price]": {"price_1"}, "line_items[0][quantity]": {"2"},
			"line_items[0][tax_rates][0]": {"txr_1"}, "payment_method_types[0]": {"card"}, "billing_address_collection": {"required"},
			"shipping_address_collection[allowed_countries][0]": {"DE"}, "success_url": {"https://a.example/ok?cs={CHECKOUT_SESSION_ID}"},
			"cancel_url": {"https://a.example/no"}, "client_reference_id": {"ref"}, "metadata[tenantId]": {"t1"},
			"subscription_data[metadata][tenantId]": {"t1"},
		}},
		{"create payment checkout", obj("checkout.session", "cs_1"), func(c *pspx.Client) error {
			_, err := c.CreateCheckoutSession(ctx, testKey, idem, app.PspxCheckoutInput{
				Customer: "cus_1", Mode: "payment", Price: "price_1", SuccessURL: "https://a.example/ok", Metadata: map[string]string{"tenantId": "t1"},
			})
			return err
		}, "POST", "/v1/checkout/sessions", url.Values{
			"customer": {"cus_1"}, "mode": {"payment"}, "line_items[0][price]": {"price_1"}, "line_items[0][quantity]": {"1"},
			"billing_address_collection": {"auto"}, "success_url": {"https://a.example/ok"}, "metadata[tenantId]": {"t1"},
			"payment_intent_data[metadata][tenantId]": {"t1"},
		}},
		{"create setup checkout", obj("checkout.session", "cs_1"), func(c *pspx.Client) error {
			_, err := c.CreateCheckoutSession(ctx, testKey, idem, app.PspxCheckoutInput{
				Customer: "cus_1", Mode: "setup", PaymentMethodType: "sepa_debit", Currency: "eur", SuccessURL: "https://a.example/ok",
			})
			return err
		}, "POST", "/v1/checkout/sessions", url.Values{
			"customer": {"cus_1"}, "mode": {"setup"}, "payment_method_types[0]": {"sepa_debit"}, "currency": {"eur"},
			"billing_address_collection": {"auto"}, "success_url": {"https://a.example/ok"},
		}},
		{"checkout session", obj("checkout.session", "cs_1"), func(c *pspx.Client) error { _, err := c.CheckoutSession(ctx, testKey, "cs_1"); return err },
			"GET", "/v1/checkout/sessions/cs_1", url.Values{"expand[]": {"subscription", "payment_intent", "setup_intent"}}},
		{"subscription", obj("subscription", "sub_1"), func(c *pspx.Client) error { _, err := c.Subscription(ctx, testKey, "sub_1"); return err },
			"GET", "/v1/subscriptions/sub_1", url.Values{}},
		{"create subscription", obj("subscription", "sub_1"), func(c *pspx.Client) error {
			_, err := c.CreateSubscription(ctx, testKey, idem, app.PspxSubscriptionInput{Customer: "cus_1", Price: "price_1", Quantity: 3, TaxRate: "txr_1", DefaultPaymentMethod: "pm_1", Metadata: map[string]string{"tenantId": "t1"}})
			return err
		}, "POST", "/v1/subscriptions", url.Values{"customer": {"cus_1"}, "items[0][price]": {"price_1"}, "items[0][quantity]": {"3"},
			"items[0][tax_rates][0]": {"txr_1"}, "default_payment_method": {"pm_1"}, "metadata[tenantId]": {"t1"}}},
		{"change a subscription's price", obj("subscription", "sub_1"), func(c *pspx.Client) error {
			_, err := c.UpdateSubscription(ctx, testKey, idem, "sub_1", app.PspxSubscriptionUpdate{ItemID: "si_1", Price: "price_2", Quantity: 2, TaxRate: "txr_1",
				ProrationBehavior: "always_invoice", CancelAtPeriodEnd: ptr(false), Metadata: map[string]string{"plan": "big"}})
			return err
		}, "POST", "/v1/subscriptions/sub_1", url.Values{"items[0][id]": {"si_1"}, "items[0][price]": {"price_2"}, "items[0][quantity]": {"2"},
			"items[0][tax_rates][0]": {"txr_1"}, "proration_behavior": {"always_invoice"}, "cancel_at_period_end": {"false"}, "metadata[plan]": {"big"}}},
		{"cancel a subscription at its period end", obj("subscription", "sub_1"), func(c *pspx.Client) error {
			_, err := c.UpdateSubscription(ctx, testKey, idem, "sub_1", app.PspxSubscriptionUpdate{CancelAtPeriodEnd: ptr(true)})
			return err
		}, "POST", "/v1/subscriptions/sub_1", url.Values{"cancel_at_period_end": {"true"}}},
		{"create invoice item", obj("invoiceitem", "ii_1"), func(c *pspx.Client) error {
			return c.CreateInvoiceItem(ctx, testKey, idem, app.PspxInvoiceItemInput{Customer: "cus_1", Price: "price_1", Quantity: 2, TaxRate: "txr_1", Invoice: "in_1", Metadata: map[string]string{"k": "v"}})
		}, "POST", "/v1/invoiceitems", url.Values{"customer": {"cus_1"}, "price": {"price_1"}, "quantity": {"2"}, "tax_rates[0]": {"txr_1"}, "invoice": {"in_1"}, "metadata[k]": {"v"}}},
		{"create invoice item of a custom amount", obj("invoiceitem", "ii_1"), func(c *pspx.Client) error {
			return c.CreateInvoiceItem(ctx, testKey, idem, app.PspxInvoiceItemInput{Customer: "cus_1", Amount: 750, Currency: "eur", Description: "Upgrade", TaxRate: "txr_1", Invoice: "in_1"})
		}, "POST", "/v1/invoiceitems", url.Values{"customer": {"cus_1"}, "amount": {"750"}, "currency": {"eur"}, "description": {"Upgrade"}, "tax_rates[0]": {"txr_1"}, "invoice": {"in_1"}}},
		{"create invoice", obj("invoice", "in_1"), func(c *pspx.Client) error {
			_, err := c.CreateInvoice(ctx, testKey, idem, app.PspxInvoiceInput{Customer: "cus_1", Footer: "Thanks", DefaultPaymentMethod: "pm_1", Metadata: map[string]string{"k": "v"}, PendingItemsBehavior: "include"})
			return err
		}, "POST", "/v1/invoices", url.Values{"customer": {"cus_1"}, "footer": {"Thanks"}, "default_payment_method": {"pm_1"}, "metadata[k]": {"v"}, "pending_invoice_items_behavior": {"include"}}},
		{"finalize invoice", obj("invoice", "in_1"), func(c *pspx.Client) error { _, err := c.FinalizeInvoice(ctx, testKey, idem, "in_1"); return err },
			"POST", "/v1/invoices/in_1/finalize", url.Values{}},
		{"pay invoice with a method", obj("invoice", "in_1"), func(c *pspx.Client) error { _, err := c.PayInvoice(ctx, testKey, idem, "in_1", "pm_1"); return err },
			"POST", "/v1/invoices/in_1/pay", url.Values{"payment_method": {"pm_1"}}},
		{"pay invoice with the default", obj("invoice", "in_1"), func(c *pspx.Client) error { _, err := c.PayInvoice(ctx, testKey, idem, "in_1", ""); return err },
			"POST", "/v1/invoices/in_1/pay", url.Values{}},
		{"void invoice", obj("invoice", "in_1"), func(c *pspx.Client) error { _, err := c.VoidInvoice(ctx, testKey, idem, "in_1"); return err },
			"POST", "/v1/invoices/in_1/void", url.Values{}},
		{"invoice", obj("invoice", "in_1"), func(c *pspx.Client) error { _, err := c.Invoice(ctx, testKey, "in_1"); return err },
			"GET", "/v1/invoices/in_1", url.Values{}},
		{"list invoices", list("invoice"), func(c *pspx.Client) error {
			_, err := c.ListInvoices(ctx, testKey, app.PspxInvoiceQuery{Customer: "cus_1", Limit: 20, StartingAfter: "in_9"})
			return err
		}, "GET", "/v1/invoices", url.Values{"customer": {"cus_1"}, "limit": {"20"}, "starting_after": {"in_9"}}},
		{"list invoices before a cursor", list("invoice"), func(c *pspx.Client) error {
			_, err := c.ListInvoices(ctx, testKey, app.PspxInvoiceQuery{Customer: "cus_1", EndingBefore: "in_9"})
			return err
		}, "GET", "/v1/invoices", url.Values{"customer": {"cus_1"}, "ending_before": {"in_9"}}},
		{"payment intent", obj("payment_intent", "pi_1"), func(c *pspx.Client) error { _, err := c.PaymentIntent(ctx, testKey, "pi_1"); return err },
			"GET", "/v1/payment_intents/pi_1", url.Values{}},
		{"payment methods", list("payment_method"), func(c *pspx.Client) error { _, err := c.PaymentMethods(ctx, testKey, "cus_1"); return err },
			"GET", "/v1/customers/cus_1/payment_methods", url.Values{"limit": {"100"}}},
		{"detach payment method", obj("payment_method", "pm_1"), func(c *pspx.Client) error { return c.DetachPaymentMethod(ctx, testKey, idem, "pm_1") },
			"POST", "/v1/payment_methods/pm_1/detach", url.Values{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := stub(t, 200, tc.answer)
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			r := rec.req
			if r.Method != tc.method || r.URL.Path != tc.path {
				t.Fatalf("sent %s %s, want %s %s", r.Method, r.URL.Path, tc.method, tc.path)
			}
			if r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Pspx-Version") != "2024-06-20" {
				t.Fatalf("headers %v", r.Header)
			}
			got := r.URL.Query()
			if tc.method == "POST" {
				if r.Header.Get("Idempotency-Key") != idem || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
					t.Fatalf("POST headers %v", r.Header)
				}
				if rec.body != tc.params.Encode() {
					t.Fatalf("body %q is not the sorted encoding %q", rec.body, tc.params.Encode())
				}
				got, _ = url.ParseQuery(rec.body)
			} else if r.Header.Get("Idempotency-Key") != "" || rec.body != "" {
				t.Fatalf("GET sent a key %q or a body %q", r.Header.Get("Idempotency-Key"), rec.body)
			}
			if !reflect.DeepEqual(got, tc.params) {
				t.Fatalf("sent params\n%v\nwant\n%v", got, tc.params)
			}
		})
	}
}

func TestCallerBugsAreRefusedBeforeAnythingIsSent(t *testing.T) {
	ctx := context.Background()
	c, rec := stub(t, 200, `{}`)
	cases := map[string]func() error{
		"empty id": func() error { _, err := c.Customer(ctx, testKey, ""); return err },
		"no idempotency key": func() error {
			_, err := c.CreateCustomer(ctx, testKey, "", app.PspxCustomerInput{Email: "a@b.c"})
			return err
		},
		"item change without its id": func() error {
			_, err := c.UpdateSubscription(ctx, testKey, "k", "sub_1", app.PspxSubscriptionUpdate{Price: "price_2"})
			return err
		},
		"bracket in a metadata key": func() error {
			_, err := c.CreateCustomer(ctx, testKey, "k", app.PspxCustomerInput{Metadata: map[string]string{"a[b]": "c"}})
			return err
		},
	}
	for name, call := range cases {
		err := call()
		var pe *app.ProviderError
		if err == nil || errors.As(err, &pe) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if rec.n != 0 {
		t.Fatalf("%d requests sent", rec.n)
	}
}

func TestErrorAnswersMapToProviderErrorsAndEverythingElseToPlainErrors(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		answer      string
		want        *app.ProviderError // nil: a plain error
		callerFault bool
	}{
		{"missing object", 404, `{"error":{"type":"invalid_request_error","code":"resource_missing","param":"id","message":"No such customer: 'cus_x'"}}`,
			&app.ProviderError{Status: 404, Code: "resource_missing", Param: "id", UserMessage: "No such customer: 'cus_x'"}, true},
		{"declined card", 402, `{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline","message":"Your card was declined."}}`,
			&app.ProviderError{Status: 402, Code: "card_declined", UserMessage: "Your card was declined."}, true},
		{"reused idempotency key", 400, `{"error":{"type":"idempotency_error","message":"Keys for idempotent requests can only be used with the same parameters."}}`,
			&app.ProviderError{Status: 400, Code: "idempotency_error", UserMessage: "Keys for idempotent requests can only be used with the same parameters."}, true},
		{"bad key", 401, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: sk_test_****abcd"}}`,
			&app.ProviderError{Status: 401, Code: "invalid_request_error", UserMessage: "Invalid API Key provided: sk_test_****abcd"}, false},
		{"provider fault after the retries", 500, `{"error":{"type":"api_error","message":"Something went wrong."}}`,
			&app.ProviderError{Status: 500, Code: "api_error", UserMessage: "Something went wrong."}, false},
		{"gateway page", 502, `<html>Bad gateway</html>`, nil, false},
		{"error without an object", 404, ``, nil, false},
		{"success that is not JSON", 200, `<html>hello</html>`, nil, false},
		{"success of another kind", 200, `{"object":"price","id":"price_1"}`, nil, false},
		{"success without an id", 200, `{"object":"customer"}`, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := stub(t, tc.status, tc.answer)
			_, err := c.Customer(context.Background(), testKey, "cus_x")
			if err == nil {
				t.Fatal("no error")
			}
			var pe *app.ProviderError
			isPE := errors.As(err, &pe)
			if tc.want == nil {
				if isPE {
					t.Fatalf("a provider error for a non-error answer: %v", pe)
				}
				return
			}
			if !isPE || *pe != *tc.want || pe.CallerFault() != tc.callerFault {
				t.Fatalf("got %#v (%v), want %#v", pe, err, tc.want)
			}
			if wantTries := map[bool]int{true: 2, false: 1}[tc.status >= 500]; rec.n != wantTries {
				t.Fatalf("%d attempts, want %d", rec.n, wantTries)
			}
		})
	}
}

func TestPaymentMethodsFollowsTheCursorUntilTheLastPage(t *testing.T) {
	var mu sync.Mutex
	var cursors []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cursors = append(cursors, r.URL.Query().Get("starting_after"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("starting_after") == "" {
			_, _ = io.WriteString(w, `{"object":"list","has_more":true,"data":[{"object":"payment_method","id":"pm_1"},{"object":"payment_method","id":"pm_2"}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"object":"list","has_more":false,"data":[{"object":"payment_method","id":"pm_3"}]}`)
	}))
	defer srv.Close()
	ids, err := pspx.New(pspx.Config{BaseURL: srv.URL}).PaymentMethods(context.Background(), testKey, "cus_1")
	if err != nil || !reflect.DeepEqual(ids, []string{"pm_1", "pm_2", "pm_3"}) || !reflect.DeepEqual(cursors, []string{"", "pm_2"}) {
		t.Fatalf("ids %v, cursors %v, err %v", ids, cursors, err)
	}
}
