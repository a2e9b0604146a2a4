package pspx_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRequestsWithoutAValidSecretKeyAreRefusedWith401(t *testing.T) {
	e := newEnv(t)
	for _, auth := range []string{"", "Basic c2tfdGVzdDo=", "Bearer pk_test_abcdefgh123", "Bearer sk_test_short", "Bearer sk_prod_abcdefgh123", "Bearer sk_test_abc$defgh123"} {
		req, _ := http.NewRequest("GET", e.url+"/v1/customers/cus_1", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		a := e.send(req)
		if a.status != http.StatusUnauthorized || obj(a.body["error"].(map[string]any)).str(t, "type") != "invalid_request_error" {
			t.Errorf("Authorization %q: %d %s", auth, a.status, a.raw)
		}
	}
}

func TestEachSecretKeyIsAnAccountOfItsOwnInItsMode(t *testing.T) {
	e := newEnv(t)
	id := e.customer()
	if got := e.ok("GET", "/v1/customers/"+id); got.get(t, "livemode") != false || got.str(t, "metadata", "tenantId") != "t1" {
		t.Fatalf("test-mode customer: %v", got)
	}
	other := *e
	other.key = "sk_test_otheraccount1"
	if err := other.fails(http.StatusNotFound, "GET", "/v1/customers/"+id); err.str(t, "code") != "resource_missing" {
		t.Fatalf("another account saw the customer: %v", err)
	}
	live := *e
	live.key = "sk_live_liveaccount12"
	if got := live.ok("POST", "/v1/customers", "email", "x@example.com"); got.get(t, "livemode") != true {
		t.Fatalf("live key made a test object: %v", got)
	}
}

func TestTheVersionSentIsEchoedAndAMalformedOneRefused(t *testing.T) {
	e := newEnv(t)
	a := e.call("POST", "/v1/customers", http.Header{"Pspx-Version": {"2023-10-16"}}, "email", "a@example.com")
	if a.status != http.StatusOK || a.header.Get("Pspx-Version") != "2023-10-16" {
		t.Fatalf("version not echoed: %d %q", a.status, a.header.Get("Pspx-Version"))
	}
	if a := e.call("GET", "/v1/customers/cus_x", nil); a.header.Get("Pspx-Version") != "2024-06-20" {
		t.Fatalf("default version %q", a.header.Get("Pspx-Version"))
	}
	if a := e.call("POST", "/v1/customers", http.Header{"Pspx-Version": {"latest"}}); a.status != http.StatusBadRequest {
		t.Fatalf("malformed version answered %d", a.status)
	}
}

func TestAnIdempotentPostIsReplayedAndAReusedKeyWithOtherParamsRefused(t *testing.T) {
	e := newEnv(t)
	key := http.Header{"Idempotency-Key": {"op-1"}}
	first := e.call("POST", "/v1/customers", key, "email", "a@example.com", "name", "A")
	again := e.call("POST", "/v1/customers", key, "name", "A", "email", "a@example.com") // same params, other order
	if first.status != 200 || again.raw != first.raw || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("not replayed: %d %q vs %q", again.status, first.raw, again.raw)
	}
	if n := count(e.eventTypes(), "customer.created"); n != 1 {
		t.Fatalf("%d customers created", n)
	}
	other := e.call("POST", "/v1/customers", key, "email", "b@example.com")
	if other.status != http.StatusBadRequest || obj(other.body["error"].(map[string]any)).str(t, "type") != "idempotency_error" {
		t.Fatalf("reused key with other params: %d %s", other.status, other.raw)
	}
	// An error is an answer too: replayed as it was, not run again.
	bad := e.call("POST", "/v1/prices", http.Header{"Idempotency-Key": {"op-2"}}, "product", "prod_missing", "unit_amount", "1", "currency", "eur")
	if again := e.call("POST", "/v1/prices", http.Header{"Idempotency-Key": {"op-2"}}, "product", "prod_missing", "unit_amount", "1", "currency", "eur"); again.status != 404 || again.raw != bad.raw {
		t.Fatalf("error not replayed: %d %s", again.status, again.raw)
	}
}

func TestMalformedRequestsGetTheProvidersErrorObject(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		code, param                           string
	}{
		{"unknown parameter", "POST", "/v1/customers", "", "email=a%40b.c&colour=red", 400, "parameter_unknown", "colour"},
		{"unknown nested parameter", "POST", "/v1/customers", "", "invoice_settings[footer]=x", 400, "parameter_unknown", "invoice_settings[footer]"},
		{"not an integer", "POST", "/v1/prices", "", "product=p&currency=eur&unit_amount=ten", 400, "parameter_invalid_integer", "unit_amount"},
		{"hash where a string goes", "POST", "/v1/customers", "", "email[x]=1", 400, "", "email"},
		{"value and hash at once", "POST", "/v1/customers", "", "metadata=1&metadata[a]=2", 400, "", "metadata[a]"},
		{"unbalanced brackets", "POST", "/v1/customers", "", "metadata[a=1", 400, "", "metadata[a"},
		{"bad percent escape", "POST", "/v1/customers", "", "email=%zz", 400, "", ""},
		{"nested metadata", "POST", "/v1/customers", "", "metadata[a][b]=1", 400, "", "metadata[a]"},
		{"JSON body", "POST", "/v1/customers", "application/json", `{"email":"a@b.c"}`, 400, "", ""},
		{"missing parameter", "POST", "/v1/products", "", "", 400, "parameter_missing", "name"},
		{"unknown URL", "GET", "/v1/charges", "", "", 404, "", ""},
		{"unknown method on a known path", "DELETE", "/v1/customers/cus_1", "", "", 404, "", ""},
		{"body over 1 MiB", "POST", "/v1/customers", "", "email=" + strings.Repeat("a", 1<<20), 400, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.url+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+e.key)
			ct := c.contentType
			if ct == "" {
				ct = "application/x-www-form-urlencoded"
			}
			req.Header.Set("Content-Type", ct)
			a := e.send(req)
			errObj, ok := a.body["error"].(map[string]any)
			if a.status != c.status || !ok {
				t.Fatalf("status %d, want %d\n%s", a.status, c.status, a.raw)
			}
			got := obj(errObj)
			if got.str(t, "type") != "invalid_request_error" || got.str(t, "message") == "" || got.str(t, "code") != c.code || got.str(t, "param") != c.param {
				t.Fatalf("error %v, want code %q param %q", got, c.code, c.param)
			}
		})
	}
}

func TestInvoiceTotalsAddExclusiveTaxRoundedHalfUp(t *testing.T) {
	cases := []struct {
		name               string
		amount, quantity   string
		percent, inclusive string
		wantTax, wantTotal int64
		wantSubtotal       int64
	}{
		{"19 % on top", "1000", "1", "19", "false", 190, 1190, 1000},
		{"19 % included", "1190", "1", "19", "true", 190, 1190, 1190},
		{"half a cent rounds up", "5", "1", "10", "false", 1, 6, 5},
		{"below half rounds down", "333", "1", "7.5", "false", 25, 358, 333},
		{"quantity multiplies before tax", "333", "3", "7.5", "false", 75, 1074, 999},
		{"fractional rate", "10000", "1", "7.25", "false", 725, 10725, 10000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			cus := e.customer()
			tax := e.ok("POST", "/v1/tax_rates", "display_name", "VAT", "percentage", c.percent, "inclusive", c.inclusive).str(t, "id")
			e.ok("POST", "/v1/invoiceitems", "customer", cus, "price", e.oneTimePrice(c.amount), "quantity", c.quantity, "tax_rates[0]", tax)
			inv := e.ok("POST", "/v1/invoices", "customer", cus, "pending_invoice_items_behavior", "include")
			if inv.num(t, "tax") != c.wantTax || inv.num(t, "total") != c.wantTotal || inv.num(t, "subtotal") != c.wantSubtotal || inv.num(t, "amount_due") != c.wantTotal {
				t.Fatalf("subtotal %d tax %d total %d due %d, want %d %d %d", inv.num(t, "subtotal"), inv.num(t, "tax"), inv.num(t, "total"), inv.num(t, "amount_due"), c.wantSubtotal, c.wantTax, c.wantTotal)
			}
		})
	}
}

func TestInvoicesListNewestFirstWithCursorsBothWays(t *testing.T) {
	e := newEnv(t)
	cus := e.customer()
	var ids []string // oldest first
	for range 5 {
		ids = append(ids, e.ok("POST", "/v1/invoices", "customer", cus).str(t, "id"))
	}
	e.ok("POST", "/v1/invoices", "customer", e.customer()) // another customer's
	page := func(kv ...string) ([]string, bool) {
		l := e.ok("GET", "/v1/invoices", append([]string{"customer", cus}, kv...)...)
		var got []string
		for _, inv := range l.objs(t, "data") {
			got = append(got, inv.str(t, "id"))
		}
		return got, l.get(t, "has_more") == true
	}
	if got, more := page("limit", "2"); !equal(got, []string{ids[4], ids[3]}) || !more {
		t.Fatalf("first page %v more %v", got, more)
	}
	if got, more := page("limit", "2", "starting_after", ids[3]); !equal(got, []string{ids[2], ids[1]}) || !more {
		t.Fatalf("second page %v more %v", got, more)
	}
	if got, more := page("limit", "2", "starting_after", ids[1]); !equal(got, []string{ids[0]}) || more {
		t.Fatalf("last page %v more %v", got, more)
	}
	if got, more := page("limit", "2", "ending_before", ids[1]); !equal(got, []string{ids[3], ids[2]}) || !more {
		t.Fatalf("page before %v more %v", got, more)
	}
	e.fails(http.StatusBadRequest, "GET", "/v1/invoices", "limit", "101")
	e.fails(http.StatusNotFound, "GET", "/v1/invoices", "starting_after", "in_missing")
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func TestManualInvoiceLifecycle(t *testing.T) {
	e := newEnv(t)
	cus := e.customer()
	declining := e.savedMethod(cus, card("4000 0000 0000 0341"))
	good := e.savedMethod(cus, card("4242424242424242"))
	draft := e.ok("POST", "/v1/invoices", "customer", cus, "footer", "Thanks", "metadata[k]", "v")
	id := draft.str(t, "id")
	e.ok("POST", "/v1/invoiceitems", "customer", cus, "price", e.oneTimePrice("500"), "invoice", id)
	open := e.ok("POST", "/v1/invoices/"+id+"/finalize")
	if open.str(t, "status") != "open" || open.num(t, "amount_due") != 500 || open.str(t, "number") == "" {
		t.Fatalf("finalized: %v", open)
	}
	e.fails(http.StatusBadRequest, "POST", "/v1/invoices/"+id+"/finalize")
	if err := e.fails(http.StatusPaymentRequired, "POST", "/v1/invoices/"+id+"/pay", "payment_method", declining); err.str(t, "code") != "card_declined" || err.str(t, "type") != "card_error" {
		t.Fatalf("declined pay: %v", err)
	}
	if inv := e.ok("GET", "/v1/invoices/"+id); inv.str(t, "status") != "open" || inv.num(t, "attempt_count") != 1 {
		t.Fatalf("after a decline: %v", inv)
	}
	paid := e.ok("POST", "/v1/invoices/"+id+"/pay", "payment_method", good)
	if paid.str(t, "status") != "paid" || paid.num(t, "amount_paid") != 500 {
		t.Fatalf("paid: %v", paid)
	}
	if pi := e.ok("GET", "/v1/payment_intents/"+paid.str(t, "payment_intent")); pi.str(t, "status") != "succeeded" || pi.str(t, "payment_method") != good || pi.str(t, "invoice") != id {
		t.Fatalf("payment intent: %v", pi)
	}
	e.fails(http.StatusBadRequest, "POST", "/v1/invoices/"+id+"/void")

	other := e.ok("POST", "/v1/invoices", "customer", cus).str(t, "id")
	e.ok("POST", "/v1/invoiceitems", "customer", cus, "price", e.oneTimePrice("700"), "invoice", other)
	e.ok("POST", "/v1/invoices/"+other+"/finalize")
	if v := e.ok("POST", "/v1/invoices/"+other+"/void"); v.str(t, "status") != "void" {
		t.Fatalf("voided: %v", v)
	}
	types := e.eventTypes()
	for _, want := range []string{"invoice.created", "invoice.finalized", "invoice.payment_failed", "invoice.paid", "invoice.voided", "invoiceitem.created"} {
		if count(types, want) == 0 {
			t.Errorf("no %s event in %v", want, types)
		}
	}
}

func TestInvoiceItemsOfACustomAmountNeedACurrencyAndADescription(t *testing.T) {
	e := newEnv(t)
	cus := e.customer()
	e.savedMethod(cus, card("4242424242424242"))
	rate := e.ok("POST", "/v1/tax_rates", "display_name", "VAT", "percentage", "19", "inclusive", "false").str(t, "id")
	id := e.ok("POST", "/v1/invoices", "customer", cus).str(t, "id")
	for _, bad := range [][]string{
		{"amount", "750", "description", "Upgrade"},
		{"amount", "750", "currency", "eur"},
		{"amount", "0", "currency", "eur", "description", "Upgrade"},
		{"amount", "750", "currency", "euro", "description", "Upgrade"},
		{"amount", "750", "currency", "eur", "description", "Upgrade", "price", e.oneTimePrice("500")},
	} {
		e.fails(http.StatusBadRequest, "POST", "/v1/invoiceitems", append([]string{"customer", cus, "invoice", id}, bad...)...)
	}
	item := e.ok("POST", "/v1/invoiceitems", "customer", cus, "invoice", id, "amount", "750", "currency", "EUR",
		"description", "Upgrade for the rest of the period", "tax_rates[0]", rate)
	if item.num(t, "amount") != 750 || item.str(t, "currency") != "eur" || item.str(t, "description") != "Upgrade for the rest of the period" {
		t.Fatalf("item: %v", item)
	}
	open := e.ok("POST", "/v1/invoices/"+id+"/finalize")
	if open.num(t, "amount_due") != 893 { // 750 + 19 % tax, rounded half up
		t.Fatalf("finalized: %v", open)
	}
}

func TestDetachingTheDefaultMethodClearsItAndTheMethodLeavesTheList(t *testing.T) {
	e := newEnv(t)
	cus := e.customer()
	pm := e.savedMethod(cus, card("4242 4242 4242 4242"))
	if got := e.ok("POST", "/v1/customers/"+cus, "invoice_settings[default_payment_method]", pm); got.str(t, "invoice_settings", "default_payment_method") != pm {
		t.Fatalf("default not set: %v", got)
	}
	if l := e.ok("GET", "/v1/customers/"+cus+"/payment_methods"); len(l.objs(t, "data")) != 1 {
		t.Fatalf("methods: %v", l)
	}
	e.ok("POST", "/v1/payment_methods/"+pm+"/detach")
	if got := e.ok("GET", "/v1/customers/"+cus); got.str(t, "invoice_settings", "default_payment_method") != "" {
		t.Fatalf("default survived the detach: %v", got)
	}
	if l := e.ok("GET", "/v1/customers/"+cus+"/payment_methods"); len(l.objs(t, "data")) != 0 {
		t.Fatalf("detached method listed: %v", l)
	}
	e.fails(http.StatusBadRequest, "POST", "/v1/payment_methods/"+pm+"/detach")
	e.fails(http.StatusNotFound, "POST", "/v1/customers/"+cus, "invoice_settings[default_payment_method]", "pm_missing")
}

func TestEventsAreListedNewestFirstAndHandedOutAsCopies(t *testing.T) {
	e := newEnv(t)
	e.customer()
	e.catalog()
	l := e.ok("GET", "/v1/events", "limit", "2")
	data := l.objs(t, "data")
	if len(data) != 2 || data[0].str(t, "type") != "tax_rate.created" || data[1].str(t, "type") != "price.created" || l.get(t, "has_more") != true {
		t.Fatalf("events page: %v", l)
	}
	if data[0].str(t, "object") != "event" || data[0].str(t, "data", "object", "object") != "tax_rate" {
		t.Fatalf("event shape: %v", data[0])
	}
	one := e.ok("GET", "/v1/events/"+data[0].str(t, "id"))
	if one.str(t, "id") != data[0].str(t, "id") {
		t.Fatalf("event by id: %v", one)
	}
	evs := e.sb.Events()
	evs[0].Body[0] = 'X'
	if e.sb.Events()[0].Body[0] == 'X' {
		t.Fatal("Events handed out the sandbox's own bytes")
	}
	if evs[0].Type != "customer.created" || evs[0].Account != e.key || evs[0].Livemode {
		t.Fatalf("first event %+v", evs[0])
	}
}

func TestConcurrentRequestsAndClockAdvancesAreSafe(t *testing.T) {
	e := newEnv(t)
	cus, _ := e.subscribe(card("4242424242424242"))
	price := e.oneTimePrice("100")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				e.advance(24 * time.Hour)
				return
			}
			a := e.call("POST", "/v1/invoiceitems", nil, "customer", cus, "price", price)
			if a.status != http.StatusOK {
				t.Errorf("concurrent request: %d %s", a.status, a.raw)
			}
		})
	}
	wg.Wait()
	if n := count(e.eventTypes(), "invoiceitem.created"); n != 4 {
		t.Fatalf("%d invoice items recorded, want 4", n)
	}
}
