package pspy_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// problemOf checks an answer is the provider's problem with the status and field.
func problemOf(t *testing.T, a answer, status int, field string) {
	t.Helper()
	if a.status != status || a.header.Get("Content-Type") != "application/hal+json" {
		t.Fatalf("answer %d (%s) %s, want a %d problem", a.status, a.header.Get("Content-Type"), a.raw, status)
	}
	if a.body.at("status") != float64(status) || a.body.str("title") == "" || a.body.str("detail") == "" ||
		a.body.str("field") != field || a.body.str("_links.documentation.href") == "" {
		t.Fatalf("problem %s, want status %d, a title, a detail, field %q and a documentation link", a.raw, status, field)
	}
}

func TestRequestsWithoutAValidSecretKeyAreUnauthorized(t *testing.T) {
	e := start(t)
	for _, header := range []string{"", "Basic dGVzdA==", "Bearer", "Bearer sk_test_123", "Bearer test_", "Bearer test_ab-cd", "test_abcdef"} {
		req, _ := http.NewRequest("GET", e.base+"/v2/payments/tr_x", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("Content-Type") != "application/hal+json" {
			t.Errorf("Authorization %q: %d %s, want a 401 problem", header, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	a := e.call("POST", "/v2/customers", "", "", obj{})
	problemOf(t, a, 401, "")
	if a.body.str("title") != "Unauthorized Request" {
		t.Errorf("title %q", a.body.str("title"))
	}
}

func TestEachSecretKeyIsItsOwnAccountWithTheModeOfItsPrefix(t *testing.T) {
	e := start(t)
	test := e.must(201, "POST", "/v2/customers", testKey, obj{"name": "A"})
	live := e.must(201, "POST", "/v2/customers", liveKey, obj{"name": "B"})
	if test.str("mode") != "test" || live.str("mode") != "live" {
		t.Fatalf("modes %q and %q", test.str("mode"), live.str("mode"))
	}
	id := test.str("id")
	if !strings.HasPrefix(id, "cst_") || test.str("resource") != "customer" || test.str("_links.self.href") != e.base+"/v2/customers/"+id {
		t.Fatalf("customer %v", test)
	}
	if got := e.must(200, "GET", "/v2/customers/"+id, testKey, nil); got.str("id") != id || got.str("name") != "A" {
		t.Fatalf("own customer %v", got)
	}
	for _, key := range []string{otherKey, liveKey} {
		problemOf(t, e.call("GET", "/v2/customers/"+id, key, "", nil), 404, "")
	}
	p := e.payment(testKey, nil)
	problemOf(t, e.call("GET", "/v2/payments/"+p.str("id"), otherKey, "", nil), 404, "")
	problemOf(t, e.call("POST", "/v2/payments", otherKey, "", obj{
		"amount": obj{"currency": "EUR", "value": "1.00"}, "description": "x", "redirectUrl": "https://a.example",
		"customerId": id,
	}), 422, "customerId")
}

func TestAnIdempotencyKeyReplaysTheFirstAnswerAndRefusesOtherParameters(t *testing.T) {
	e := start(t)
	body := obj{"name": "Ada", "email": "ada@example.com"}
	first := e.call("POST", "/v2/customers", testKey, "op-1", body)
	again := e.call("POST", "/v2/customers", testKey, "op-1", body)
	if first.status != 201 || again.status != 201 || string(first.raw) != string(again.raw) {
		t.Fatalf("replay: %d %s then %d %s", first.status, first.raw, again.status, again.raw)
	}
	problemOf(t, e.call("POST", "/v2/customers", testKey, "op-1", obj{"name": "Bob"}), 422, "")
	// An error answer is replayed as well, and another account's key space is its own.
	bad := obj{"email": "nope"}
	if a, b := e.call("POST", "/v2/customers", testKey, "op-2", bad), e.call("POST", "/v2/customers", testKey, "op-2", bad); a.status != 422 || string(a.raw) != string(b.raw) {
		t.Fatalf("error replay: %d %s then %s", a.status, a.raw, b.raw)
	}
	if other := e.call("POST", "/v2/customers", otherKey, "op-1", obj{"name": "Bob"}); other.status != 201 || other.body.str("id") == first.body.str("id") {
		t.Fatalf("another account's same key: %d %s", other.status, other.raw)
	}
	if a, b := e.call("POST", "/v2/customers", testKey, "", body), e.call("POST", "/v2/customers", testKey, "", body); a.body.str("id") == b.body.str("id") {
		t.Fatal("requests without a key were replayed")
	}
}

func TestAmountsNeedExactlyTheCurrencysMinorDigits(t *testing.T) {
	e := start(t)
	cases := []struct {
		currency, value string
		field           string // "" = accepted
	}{
		{"EUR", "10.00", ""},
		{"USD", "0.01", ""},
		{"JPY", "1000", ""},
		{"EUR", "10", "amount.value"},
		{"EUR", "10.0", "amount.value"},
		{"EUR", "10.000", "amount.value"},
		{"EUR", "10,00", "amount.value"},
		{"EUR", "-1.00", "amount.value"},
		{"EUR", "010.00", "amount.value"},
		{"EUR", "0.00", "amount.value"},
		{"JPY", "10.00", "amount.value"},
		{"eur", "10.00", "amount.currency"},
		{"XXX", "10.00", "amount.currency"},
	}
	for _, c := range cases {
		a := e.call("POST", "/v2/payments", testKey, "", obj{
			"amount": obj{"currency": c.currency, "value": c.value}, "description": "x", "redirectUrl": "https://a.example",
		})
		if c.field == "" {
			if a.status != 201 || a.body.str("amount.value") != c.value || a.body.str("amount.currency") != c.currency {
				t.Errorf("%s %s: %d %s", c.currency, c.value, a.status, a.raw)
			}
			continue
		}
		if a.status != 422 || a.body.str("field") != c.field {
			t.Errorf("%s %s: %d %s, want 422 on %s", c.currency, c.value, a.status, a.raw, c.field)
		}
	}
}

func TestBadPaymentRequestsGetTheProvidersProblem(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	valid := func(change func(obj)) obj {
		b := obj{"amount": obj{"currency": "EUR", "value": "10.00"}, "description": "x", "redirectUrl": "https://a.example"}
		change(b)
		return b
	}
	cases := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"no amount", valid(func(b obj) { delete(b, "amount") }), 422, "amount"},
		{"amount value as a number", valid(func(b obj) { b["amount"] = obj{"currency": "EUR", "value": 10} }), 422, "amount.value"},
		{"no description", valid(func(b obj) { delete(b, "description") }), 422, "description"},
		{"description over 255 characters", valid(func(b obj) { b["description"] = strings.Repeat("é", 256) }), 422, "description"},
		{"no redirect URL", valid(func(b obj) { delete(b, "redirectUrl") }), 422, "redirectUrl"},
		{"relative redirect URL", valid(func(b obj) { b["redirectUrl"] = "/return" }), 422, "redirectUrl"},
		{"webhook URL without scheme", valid(func(b obj) { b["webhookUrl"] = "shop.example/hook" }), 422, "webhookUrl"},
		{"unknown sequence type", valid(func(b obj) { b["sequenceType"] = "twice" }), 422, "sequenceType"},
		{"unknown method", valid(func(b obj) { b["method"] = []string{"creditcard", "cash"} }), 422, "method"},
		{"empty method list", valid(func(b obj) { b["method"] = []string{} }), 422, "method"},
		{"first payment without customer", valid(func(b obj) { b["sequenceType"] = "first" }), 422, "customerId"},
		{"unknown customer", valid(func(b obj) { b["customerId"] = "cst_nobody" }), 422, "customerId"},
		{"mandate on a oneoff payment", valid(func(b obj) { b["customerId"], b["mandateId"] = cust, "mdt_x" }), 422, "mandateId"},
		{"recurring without mandate", valid(func(b obj) { b["customerId"], b["sequenceType"] = cust, "recurring" }), 422, ""},
		{"metadata over 1 KiB", valid(func(b obj) { b["metadata"] = obj{"k": strings.Repeat("x", 1100)} }), 422, "metadata"},
		{"invalid JSON", `{"amount":`, 400, ""},
		{"an array", `[1]`, 400, ""},
		{"two documents", `{} {}`, 400, ""},
		{"over 1 MiB", `{"description":"` + strings.Repeat("x", 1<<20) + `"}`, 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problemOf(t, e.call("POST", "/v2/payments", testKey, "", c.body), c.status, c.field)
		})
	}
}

func TestUnknownEndpointsGetTheProvidersNotFound(t *testing.T) {
	e := start(t)
	for _, c := range []struct{ method, path string }{{"GET", "/v2/orders"}, {"PUT", "/v2/payments/tr_x"}, {"GET", "/"}} {
		problemOf(t, e.call(c.method, c.path, testKey, "", nil), 404, "")
	}
	problemOf(t, e.call("GET", "/v2/payments/tr_x?embed=settlements", testKey, "", nil), 400, "embed")
}

func TestAnOpenPaymentLinksItsCheckoutPageUnderTheBaseURL(t *testing.T) {
	e := start(t)
	before := e.clock.Now().Truncate(time.Second)
	p := e.payment(testKey, obj{"method": []string{"creditcard", "directdebit"}, "metadata": obj{"order": "7"}})
	id := p.str("id")
	if !strings.HasPrefix(id, "tr_") || p.str("resource") != "payment" || p.str("status") != "open" || p.str("sequenceType") != "oneoff" || p.str("mode") != "test" {
		t.Fatalf("payment %v", p)
	}
	if p.str("_links.checkout.href") != e.base+"/checkout/"+id || p.str("_links.checkout.type") != "text/html" {
		t.Fatalf("checkout link %v", p.at("_links.checkout"))
	}
	if p.at("method") != nil || p.str("metadata.order") != "7" || p.str("redirectUrl") != "https://shop.example/return" {
		t.Fatalf("payment %v", p)
	}
	created, err := time.Parse(time.RFC3339, p.str("createdAt"))
	if err != nil || created.Before(before) || created.After(e.clock.Now()) {
		t.Fatalf("createdAt %q (%v), want the sandbox's now", p.str("createdAt"), err)
	}
	if one := e.payment(testKey, obj{"method": "directdebit"}); one.str("method") != "directdebit" {
		t.Fatalf("a single method is the payment's method: %v", one.at("method"))
	}
	got := e.must(200, "GET", "/v2/payments/"+id, testKey, nil)
	if got.str("id") != id || got.str("_links.checkout.href") == "" || got.at("paidAt") != nil {
		t.Fatalf("fetched %v", got)
	}
}

func TestRecurringPaymentsChargeTheMandateAtOnce(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	good := e.mandate(testKey, cust, "paid", "creditcard")
	recurring := obj{"sequenceType": "recurring", "customerId": cust, "redirectUrl": nil}

	p := e.payment(testKey, recurring)
	if p.str("status") != "paid" || p.str("mandateId") != good || p.str("method") != "creditcard" || p.str("paidAt") == "" || p.at("_links.checkout") != nil {
		t.Fatalf("recurring payment on the newest valid mandate: %v", p)
	}
	failing := e.mandate(testKey, cust, "paid-recurring-fails", "directdebit")
	named := obj{"mandateId": good}
	for k, v := range recurring {
		named[k] = v
	}
	if p := e.payment(testKey, named); p.str("status") != "paid" || p.str("mandateId") != good {
		t.Fatalf("recurring payment on the named mandate: %v", p)
	}
	f := e.payment(testKey, recurring)
	if f.str("status") != "failed" || f.str("mandateId") != failing || f.str("failedAt") == "" {
		t.Fatalf("recurring payment on a failing mandate: %v", f)
	}
	last := e.sb.Notifications()
	if n := last[len(last)-1]; n.PaymentID != f.str("id") || n.WebhookURL != "https://shop.example/hook" {
		t.Fatalf("last notification %+v", n)
	}

	if a := e.call("DELETE", "/v2/customers/"+cust+"/mandates/"+good, testKey, "", nil); a.status != 204 || len(a.raw) != 0 {
		t.Fatalf("revoke: %d %s", a.status, a.raw)
	}
	problemOf(t, e.call("POST", "/v2/payments", testKey, "", obj{
		"amount": obj{"currency": "EUR", "value": "1.00"}, "description": "x", "sequenceType": "recurring",
		"customerId": cust, "mandateId": good,
	}), 422, "mandateId")
}

func TestRefundsOnlyOnPaidPaymentsAndNotBeyondTheRemainingAmount(t *testing.T) {
	e := start(t)
	open := e.payment(testKey, nil)
	refund := func(id, value, currency string) answer {
		return e.call("POST", "/v2/payments/"+id+"/refunds", testKey, "", obj{"amount": obj{"currency": currency, "value": value}, "description": "goodwill"})
	}
	problemOf(t, refund(open.str("id"), "1.00", "EUR"), 422, "")
	problemOf(t, refund("tr_unknown", "1.00", "EUR"), 404, "")

	cust := e.customer(testKey)
	e.mandate(testKey, cust, "paid", "creditcard")
	paid := e.payment(testKey, obj{"sequenceType": "recurring", "customerId": cust})
	id := paid.str("id")
	if paid.str("amountRefunded.value") != "0.00" || paid.str("amountRemaining.value") != "10.00" {
		t.Fatalf("paid payment amounts %v %v", paid.at("amountRefunded"), paid.at("amountRemaining"))
	}
	problemOf(t, refund(id, "10.01", "EUR"), 422, "amount.value")
	problemOf(t, refund(id, "1.00", "USD"), 422, "amount.currency")
	problemOf(t, refund(id, "1", "EUR"), 422, "amount.value")

	r := refund(id, "4.00", "EUR")
	if r.status != 201 || !strings.HasPrefix(r.body.str("id"), "re_") || r.body.str("resource") != "refund" ||
		r.body.str("paymentId") != id || r.body.str("status") != "pending" || r.body.str("amount.value") != "4.00" {
		t.Fatalf("refund: %d %s", r.status, r.raw)
	}
	if n := e.sb.Notifications(); n[len(n)-1].PaymentID != id {
		t.Fatalf("a refund did not notify the payment's webhook: %+v", n[len(n)-1])
	}
	if refund(id, "6.00", "EUR").status != 201 {
		t.Fatal("refunding the exact remainder was refused")
	}
	problemOf(t, refund(id, "0.01", "EUR"), 422, "amount.value")

	got := e.must(200, "GET", "/v2/payments/"+id+"?embed=refunds,chargebacks", testKey, nil)
	refunds, _ := got.at("_embedded.refunds").([]any)
	if got.str("amountRefunded.value") != "10.00" || got.str("amountRemaining.value") != "0.00" || len(refunds) != 2 ||
		got.str("_links.refunds.href") == "" || got.at("_embedded.chargebacks") != nil {
		t.Fatalf("refunded payment %v", got)
	}
	if plain := e.must(200, "GET", "/v2/payments/"+id, testKey, nil); plain.at("_embedded") != nil {
		t.Fatalf("embedded without asking: %v", plain.at("_embedded"))
	}
	if none := e.must(200, "GET", "/v2/payments/"+open.str("id")+"?embed=refunds", testKey, nil); none.at("_embedded") != nil {
		t.Fatalf("embedded nothing: %v", none.at("_embedded"))
	}
}

func TestConcurrentRequestsAndClockAdvancesAreSafe(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	e.mandate(testKey, cust, "paid", "creditcard")
	e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey, obj{
		"amount": obj{"currency": "EUR", "value": "5.00"}, "interval": "1 day", "description": "daily",
		"webhookUrl": "https://shop.example/subscription-hook",
	})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			if i%2 == 0 {
				e.clock.Advance(t.Context(), 24*time.Hour)
				return
			}
			c := e.customer(testKey)
			e.payment(testKey, obj{"customerId": c})
		})
	}
	wg.Wait()
	// The first payment's, then today's charge and one for each of the three days.
	if n := len(e.sb.Notifications()); n != 5 {
		t.Fatalf("%d notifications after three day-long advances of a daily subscription, want 5", n)
	}
}
