package pspy_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestCheckoutPageShowsThePaymentAndTheTestOutcomes(t *testing.T) {
	e := start(t)
	p := e.payment(testKey, obj{"description": "Plan <Pro>", "cancelUrl": "https://cancel.example:8443/back"})
	resp, body := e.page(p.str("id"))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if csp != "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'" {
		t.Errorf("policy %q", csp)
	}
	for _, want := range []string{
		"EUR 10.00", "Plan &lt;Pro&gt;", `<form method="post">`,
		`value="creditcard"`, `value="directdebit"`,
		`value="paid"`, `value="failed"`, `value="canceled"`, `value="expired"`, `value="open"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "paid-recurring-fails") || strings.Contains(body, "<script") || strings.Contains(body, "src=") {
		t.Error("a oneoff page offers the failing-mandate outcome or loads something")
	}
	cust := e.customer(testKey)
	first := e.payment(testKey, obj{"sequenceType": "first", "customerId": cust, "method": "creditcard"})
	if _, body := e.page(first.str("id")); !strings.Contains(body, `value="paid-recurring-fails"`) || strings.Contains(body, `value="directdebit"`) {
		t.Error("a first creditcard payment's page should offer the failing-mandate outcome and only its method")
	}
	if resp, _ := e.page("tr_nothing"); resp.StatusCode != 404 {
		t.Errorf("unknown payment's page: %d", resp.StatusCode)
	}
}

func TestCheckoutOutcomesSetTheStatusNotifyAndRedirect(t *testing.T) {
	cases := []struct {
		outcome   string
		cancelURL string
		status    string
		stamp     string // the timestamp field the outcome sets
		location  string
		notified  bool
	}{
		{"paid", "", "paid", "paidAt", "https://shop.example/return", true},
		{"failed", "", "failed", "failedAt", "https://shop.example/return", true},
		{"canceled", "https://shop.example/cancel", "canceled", "canceledAt", "https://shop.example/cancel", true},
		{"canceled", "", "canceled", "canceledAt", "https://shop.example/return", true},
		{"expired", "", "expired", "expiredAt", "https://shop.example/return", true},
		{"open", "https://shop.example/cancel", "open", "", "https://shop.example/return", false},
	}
	for _, c := range cases {
		t.Run(c.outcome+" "+c.cancelURL, func(t *testing.T) {
			e := start(t)
			fields := obj{}
			if c.cancelURL != "" {
				fields["cancelUrl"] = c.cancelURL
			}
			id := e.payment(testKey, fields).str("id")
			resp := e.submit(id, url.Values{"outcome": {c.outcome}, "method": {"creditcard"}})
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != c.location {
				t.Fatalf("answer %d to %q, want 303 to %q", resp.StatusCode, resp.Header.Get("Location"), c.location)
			}
			p := e.must(200, "GET", "/v2/payments/"+id, testKey, nil)
			if p.str("status") != c.status {
				t.Fatalf("status %q, want %q", p.str("status"), c.status)
			}
			if c.stamp != "" {
				if at, err := time.Parse(time.RFC3339, p.str(c.stamp)); err != nil || at.After(e.clock.Now()) {
					t.Fatalf("%s %q", c.stamp, p.str(c.stamp))
				}
			}
			if (p.at("_links.checkout") != nil) != (c.status == "open") {
				t.Fatalf("checkout link %v on a %s payment", p.at("_links.checkout"), c.status)
			}
			n := e.sb.Notifications()
			if !c.notified {
				if len(n) != 0 {
					t.Fatalf("notifications %+v for a payment left open", n)
				}
				return
			}
			if len(n) != 1 || n[0].PaymentID != id || n[0].WebhookURL != "https://shop.example/hook" || n[0].At.IsZero() {
				t.Fatalf("notifications %+v", n)
			}
		})
	}
}

func TestAPaidFirstPaymentEstablishesAMandateOfTheChosenMethod(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	p := e.payment(testKey, obj{"sequenceType": "first", "customerId": cust})
	e.submit(p.str("id"), url.Values{"outcome": {"paid"}, "method": {"directdebit"}})
	got := e.must(200, "GET", "/v2/payments/"+p.str("id"), testKey, nil)
	mandateID := got.str("mandateId")
	if got.str("method") != "directdebit" || !strings.HasPrefix(mandateID, "mdt_") || got.str("_links.mandate.href") == "" {
		t.Fatalf("paid first payment %v", got)
	}
	list := e.must(200, "GET", "/v2/customers/"+cust+"/mandates", testKey, nil)
	if list.at("count") != float64(1) || list.str("_embedded.mandates.0.id") != mandateID ||
		list.str("_embedded.mandates.0.status") != "valid" || list.str("_embedded.mandates.0.method") != "directdebit" ||
		list.str("_embedded.mandates.0.resource") != "mandate" || list.str("_embedded.mandates.0.mode") != "test" {
		t.Fatalf("mandates %v", list)
	}
	// A oneoff payment, or a first one that was not paid, establishes nothing.
	other := e.customer(testKey)
	failed := e.payment(testKey, obj{"sequenceType": "first", "customerId": other})
	e.submit(failed.str("id"), url.Values{"outcome": {"failed"}, "method": {"creditcard"}})
	oneoff := e.payment(testKey, obj{"customerId": other})
	e.submit(oneoff.str("id"), url.Values{"outcome": {"paid"}, "method": {"creditcard"}})
	if list := e.must(200, "GET", "/v2/customers/"+other+"/mandates", testKey, nil); list.at("count") != float64(0) {
		t.Fatalf("mandates %v", list)
	}
}

func TestAPaymentNoLongerOpenShowsItsStatusAndNoForm(t *testing.T) {
	e := start(t)
	id := e.payment(testKey, nil).str("id")
	e.submit(id, url.Values{"outcome": {"failed"}, "method": {"creditcard"}})
	resp, body := e.page(id)
	if resp.StatusCode != 200 || strings.Contains(body, "<form") || !strings.Contains(body, `<strong id="status">failed</strong>`) {
		t.Fatalf("page of a failed payment: %d %s", resp.StatusCode, body)
	}
	if resp := e.submit(id, url.Values{"outcome": {"paid"}, "method": {"creditcard"}}); resp.StatusCode != http.StatusConflict {
		t.Fatalf("second submission: %d", resp.StatusCode)
	}
	if p := e.must(200, "GET", "/v2/payments/"+id, testKey, nil); p.str("status") != "failed" || len(e.sb.Notifications()) != 1 {
		t.Fatalf("a second submission changed the payment: %v", p)
	}
}

func TestCheckoutRefusesChoicesThePageDoesNotOffer(t *testing.T) {
	e := start(t)
	oneoff := e.payment(testKey, obj{"method": "creditcard"}).str("id")
	cases := []struct {
		name string
		form url.Values
	}{
		{"no outcome", url.Values{"method": {"creditcard"}}},
		{"unknown outcome", url.Values{"outcome": {"refunded"}, "method": {"creditcard"}}},
		{"failing mandate on a oneoff payment", url.Values{"outcome": {"paid-recurring-fails"}, "method": {"creditcard"}}},
		{"a method the payment excludes", url.Values{"outcome": {"paid"}, "method": {"directdebit"}}},
	}
	for _, c := range cases {
		if resp := e.submit(oneoff, c.form); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d", c.name, resp.StatusCode)
		}
	}
	if p := e.must(200, "GET", "/v2/payments/"+oneoff, testKey, nil); p.str("status") != "open" {
		t.Fatalf("refused choices changed the payment: %v", p)
	}
	// The only method allowed needs no choice.
	if resp := e.submit(oneoff, url.Values{"outcome": {"paid"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("single-method payment without a method: %d", resp.StatusCode)
	}
	if resp := e.submit("tr_nothing", url.Values{"outcome": {"paid"}}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown payment: %d", resp.StatusCode)
	}
}

func TestAPaymentWithoutAWebhookURLRecordsNoNotification(t *testing.T) {
	e := start(t)
	id := e.payment(testKey, obj{"webhookUrl": nil}).str("id")
	if resp := e.submit(id, url.Values{"outcome": {"paid"}, "method": {"creditcard"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("checkout %d", resp.StatusCode)
	}
	if n := e.sb.Notifications(); len(n) != 0 {
		t.Fatalf("notifications %+v", n)
	}
}
