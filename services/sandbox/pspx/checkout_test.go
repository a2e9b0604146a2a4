package pspx_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCardCheckoutCreatesAPaidSubscriptionAndReturnsToTheSuccessURL(t *testing.T) {
	e := newEnv(t)
	price, tax := e.catalog()
	cus := e.customer()
	sess := e.session(cus, "subscription", "line_items[0][price]", price, "line_items[0][quantity]", "2",
		"line_items[0][tax_rates][0]", tax, "subscription_data[metadata][tenantId]", "t1", "metadata[tenantId]", "t1")
	if sess.num(t, "amount_total") != 2380 || sess.str(t, "status") != "open" || !strings.HasPrefix(sess.str(t, "id"), "cs_test_") {
		t.Fatalf("new session: %v", sess)
	}
	start := e.clock.Now()
	e.pay(sess, card("4242 4242 4242 4242"))

	done := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"), "expand[]", "subscription", "expand[]", "payment_intent", "expand[]", "setup_intent")
	if done.str(t, "status") != "complete" || done.str(t, "payment_status") != "paid" || done.get(t, "url") != nil {
		t.Fatalf("completed session: %v", done)
	}
	sub := obj(done.get(t, "subscription").(map[string]any))
	item := sub.objs(t, "items", "data")[0]
	end := time.Unix(sub.num(t, "current_period_end"), 0)
	wantEnd := start.AddDate(0, 1, 0)
	if sub.str(t, "status") != "active" || item.str(t, "price", "id") != price || item.num(t, "quantity") != 2 ||
		sub.str(t, "metadata", "tenantId") != "t1" || end.Sub(wantEnd).Abs() > 5*time.Second {
		t.Fatalf("subscription: %v (period end %v, want %v)", sub, end, wantEnd)
	}
	inv := e.ok("GET", "/v1/invoices/"+sub.str(t, "latest_invoice"))
	if inv.str(t, "status") != "paid" || inv.str(t, "billing_reason") != "subscription_create" || inv.num(t, "amount_paid") != 2380 {
		t.Fatalf("first invoice: %v", inv)
	}
	pm := sub.str(t, "default_payment_method")
	methods := e.ok("GET", "/v1/customers/"+cus+"/payment_methods").objs(t, "data")
	if len(methods) != 1 || methods[0].str(t, "id") != pm || methods[0].str(t, "card", "last4") != "4242" || methods[0].str(t, "type") != "card" {
		t.Fatalf("attached methods: %v", methods)
	}
	types := e.eventTypes()
	for _, want := range []string{"payment_method.attached", "customer.subscription.created", "invoice.paid", "payment_intent.succeeded", "checkout.session.completed"} {
		if count(types, want) != 1 {
			t.Errorf("%d %s events in %v", count(types, want), want, types)
		}
	}
	// Completing twice is refused.
	if resp, _ := e.submit(sess.str(t, "url"), card("4242424242424242")...); resp.StatusCode != http.StatusConflict {
		t.Fatalf("second completion answered %d", resp.StatusCode)
	}
}

func TestHostedPageIsPlainHTMLWithAStrictPolicyAndACancelLink(t *testing.T) {
	e := newEnv(t)
	price, tax := e.catalog()
	sess := e.session(e.customer(), "subscription", "line_items[0][price]", price, "line_items[0][tax_rates][0]", tax,
		"billing_address_collection", "required", "shipping_address_collection[allowed_countries][0]", "DE")
	resp, err := http.Get(sess.str(t, "url"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "form-action") {
		t.Fatalf("page %d, policy %q", resp.StatusCode, csp)
	}
	page := string(body)
	for _, want := range []string{`<label for="card_number">`, `name="card_expiry"`, `name="card_cvc"`, `name="address_line1"`, `<option value="DE"`,
		`href="https://app.example/cancel"`, "Pro plan", "11.90 EUR", "<script"} {
		if strings.Contains(page, want) == (want == "<script") {
			t.Errorf("page containing %q is %v", want, want == "<script")
		}
	}
	// The billing address is required: the form answers with the problem and the session stays open.
	resp, page = e.submit(sess.str(t, "url"), card("4242424242424242")...)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, `role="alert"`) || !strings.Contains(page, "billing address") {
		t.Fatalf("missing address: %d\n%s", resp.StatusCode, page)
	}
	full := append(card("4242424242424242"), "address_line1", "Main St 1", "address_postal_code", "10115", "address_city", "Berlin",
		"address_country", "de", "shipping_name", "Ada", "shipping_line1", "Main St 1", "shipping_postal_code", "10115",
		"shipping_city", "Berlin", "shipping_country", "DE")
	e.pay(sess, full)
	done := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"))
	if done.str(t, "customer_details", "address", "country") != "DE" || done.str(t, "shipping_details", "address", "city") != "Berlin" {
		t.Fatalf("details not kept: %v", done)
	}
}

func TestHostedPageAnswersUnknownNumbersInlineAndStaysOpen(t *testing.T) {
	e := newEnv(t)
	price := e.oneTimePrice("1500")
	cus := e.customer()
	cardSess := e.session(cus, "payment", "line_items[0][price]", price)
	sepaSess := e.session(cus, "payment", "line_items[0][price]", price, "payment_method_types[0]", "sepa_debit")
	cases := []struct {
		name   string
		url    string
		fields []string
		want   string
	}{
		{"other card", cardSess.str(t, "url"), card("4000 0000 0000 0002"), "not a sandbox test card"},
		{"expired card", cardSess.str(t, "url"), []string{"card_number", "4242424242424242", "card_expiry", "01/20", "card_cvc", "123"}, "expiration date"},
		{"no security code", cardSess.str(t, "url"), []string{"card_number", "4242424242424242", "card_expiry", "12/39"}, "security code"},
		{"other IBAN", sepaSess.str(t, "url"), iban("DE00123456780000000000"), "not a sandbox test IBAN"},
		{"IBAN without holder", sepaSess.str(t, "url"), []string{"iban", "DE89370400440532013000"}, "account holder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, page := e.submit(c.url, c.fields...)
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, c.want) {
				t.Fatalf("%d\n%s", resp.StatusCode, page)
			}
		})
	}
	if got := e.ok("GET", "/v1/checkout/sessions/"+cardSess.str(t, "id")); got.str(t, "status") != "open" {
		t.Fatalf("session closed after input errors: %v", got)
	}
	if resp, _ := e.submit(e.url+"/checkout/cs_test_missing", card("4242424242424242")...); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session answered %d", resp.StatusCode)
	}
}

func TestADeclinedPaymentModeCheckoutShowsTheDeclineAndCanBeRetried(t *testing.T) {
	e := newEnv(t)
	cus := e.customer()
	sess := e.session(cus, "payment", "line_items[0][price]", e.oneTimePrice("1500"), "payment_intent_data[metadata][order]", "o1")
	resp, page := e.submit(sess.str(t, "url"), card("4000000000000341")...)
	if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(page, "declined") {
		t.Fatalf("decline page %d\n%s", resp.StatusCode, page)
	}
	open := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"), "expand[]", "payment_intent")
	if open.str(t, "status") != "open" || open.str(t, "payment_intent", "status") != "requires_payment_method" ||
		open.str(t, "payment_intent", "last_payment_error", "code") != "card_declined" {
		t.Fatalf("after the decline: %v", open)
	}
	if l := e.ok("GET", "/v1/customers/"+cus+"/payment_methods"); len(l.objs(t, "data")) != 0 {
		t.Fatal("a declined payment-mode card was attached")
	}
	e.pay(sess, card("4242424242424242"))
	done := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"), "expand[]", "payment_intent")
	pi := obj(done.get(t, "payment_intent").(map[string]any))
	if done.str(t, "payment_status") != "paid" || pi.str(t, "id") != open.str(t, "payment_intent", "id") || pi.str(t, "status") != "succeeded" ||
		pi.num(t, "amount") != 1500 || pi.str(t, "metadata", "order") != "o1" {
		t.Fatalf("retried payment: %v", done)
	}
}

func TestTheDecliningCardStillCompletesSubscriptionAndSetupCheckouts(t *testing.T) {
	e := newEnv(t)
	price, _ := e.catalog()
	cus := e.customer()
	sess := e.session(cus, "subscription", "line_items[0][price]", price)
	e.pay(sess, card("4000000000000341"))
	done := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"), "expand[]", "subscription")
	if done.str(t, "status") != "complete" || done.str(t, "payment_status") != "unpaid" || done.str(t, "subscription", "status") != "incomplete" {
		t.Fatalf("declined subscription checkout: %v", done)
	}
	if inv := e.ok("GET", "/v1/invoices/"+done.str(t, "invoice")); inv.str(t, "status") != "open" {
		t.Fatalf("first invoice: %v", inv)
	}
	// The first invoice never paid: the subscription expires after 23 hours.
	e.advance(24 * time.Hour)
	if sub := e.ok("GET", "/v1/subscriptions/"+done.str(t, "subscription", "id")); sub.str(t, "status") != "incomplete_expired" {
		t.Fatalf("after a day: %v", sub)
	}
	if inv := e.ok("GET", "/v1/invoices/"+done.str(t, "invoice")); inv.str(t, "status") != "void" {
		t.Fatalf("first invoice after expiry: %v", inv)
	}
	setup := e.session(cus, "setup", "currency", "eur")
	e.pay(setup, card("4000000000000341"))
	si := e.ok("GET", "/v1/checkout/sessions/"+setup.str(t, "id"), "expand[]", "setup_intent")
	if si.str(t, "payment_status") != "no_payment_required" || si.str(t, "setup_intent", "status") != "succeeded" || si.str(t, "setup_intent", "payment_method") == "" {
		t.Fatalf("setup: %v", si)
	}
}

func TestBankDebitsCompleteTheCheckoutUnpaidAndSettleAtTheNextAdvance(t *testing.T) {
	cases := []struct {
		iban, sessionEvent, intent, invoice, sub, paymentStatus string
	}{
		{"DE89 3704 0044 0532 0130 00", "checkout.session.async_payment_succeeded", "succeeded", "paid", "active", "paid"},
		{"DE62370400440532013001", "checkout.session.async_payment_failed", "requires_payment_method", "uncollectible", "canceled", "unpaid"},
	}
	for _, c := range cases {
		t.Run(c.sessionEvent, func(t *testing.T) {
			e := newEnv(t)
			price, _ := e.catalog()
			cus := e.customer()
			sess := e.session(cus, "subscription", "line_items[0][price]", price, "payment_method_types[0]", "sepa_debit")
			e.pay(sess, iban(c.iban))
			got := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"), "expand[]", "subscription")
			inv := e.ok("GET", "/v1/invoices/"+got.str(t, "invoice"))
			if got.str(t, "status") != "complete" || got.str(t, "payment_status") != "unpaid" || inv.str(t, "status") != "open" ||
				e.ok("GET", "/v1/payment_intents/"+inv.str(t, "payment_intent")).str(t, "status") != "processing" {
				t.Fatalf("before settling: %v\n%v", got, inv)
			}
			e.advance(time.Minute)
			got = e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id"), "expand[]", "subscription")
			inv = e.ok("GET", "/v1/invoices/"+got.str(t, "invoice"))
			pi := e.ok("GET", "/v1/payment_intents/"+inv.str(t, "payment_intent"))
			if pi.str(t, "status") != c.intent || inv.str(t, "status") != c.invoice || got.str(t, "subscription", "status") != c.sub ||
				got.str(t, "payment_status") != c.paymentStatus || count(e.eventTypes(), c.sessionEvent) != 1 {
				t.Fatalf("after settling: intent %s invoice %s subscription %s session %s, events %v",
					pi.str(t, "status"), inv.str(t, "status"), got.str(t, "subscription", "status"), got.str(t, "payment_status"), e.eventTypes())
			}
		})
	}
}

func TestAnOpenSessionExpiresAfterADay(t *testing.T) {
	e := newEnv(t)
	sess := e.session(e.customer(), "payment", "line_items[0][price]", e.oneTimePrice("100"))
	e.advance(25 * time.Hour)
	if got := e.ok("GET", "/v1/checkout/sessions/"+sess.str(t, "id")); got.str(t, "status") != "expired" || got.get(t, "url") != nil {
		t.Fatalf("after a day: %v", got)
	}
	if resp, _ := e.submit(sess.str(t, "url"), card("4242424242424242")...); resp.StatusCode != http.StatusGone {
		t.Fatalf("expired session answered %d", resp.StatusCode)
	}
	if count(e.eventTypes(), "checkout.session.expired") != 1 {
		t.Fatalf("events %v", e.eventTypes())
	}
}

func TestSessionCreationBlamesTheWrongParameter(t *testing.T) {
	e := newEnv(t)
	price, _ := e.catalog()
	oneTime := e.oneTimePrice("100")
	cus := e.customer()
	cases := []struct {
		name   string
		kv     []string
		status int
		param  string
	}{
		{"recurring price in payment mode", []string{"mode", "payment", "line_items[0][price]", price}, 400, "line_items[0][price]"},
		{"one-time price in subscription mode", []string{"mode", "subscription", "line_items[0][price]", oneTime}, 400, "line_items[0][price]"},
		{"subscription data in payment mode", []string{"mode", "payment", "line_items[0][price]", oneTime, "subscription_data[metadata][a]", "b"}, 400, "subscription_data"},
		{"setup without currency", []string{"mode", "setup"}, 400, "currency"},
		{"unknown mode", []string{"mode", "donation"}, 400, "mode"},
		{"relative success URL", []string{"mode", "setup", "currency", "eur", "success_url", "/done"}, 400, "success_url"},
		{"unknown price", []string{"mode", "payment", "line_items[0][price]", "price_missing"}, 404, "line_items[0][price]"},
		{"unknown expansion", []string{"mode", "setup", "currency", "eur", "expand[]", "line_items"}, 400, "expand"},
		{"SEPA in dollars", []string{"mode", "setup", "currency", "usd", "payment_method_types[0]", "sepa_debit"}, 400, "payment_method_types"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := append([]string{"customer", cus}, c.kv...)
			if !strings.Contains(strings.Join(c.kv, " "), "success_url") {
				kv = append(kv, "success_url", "https://app.example/ok")
			}
			if err := e.fails(c.status, "POST", "/v1/checkout/sessions", kv...); err.str(t, "param") != c.param {
				t.Fatalf("blamed %q: %v", err.str(t, "param"), err)
			}
		})
	}
}
