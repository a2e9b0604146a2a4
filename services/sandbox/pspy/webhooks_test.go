package pspy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/services/sandbox/delivery"
)

// fast makes a provider minute last 2 ms of real time.
const fast = 2.0 / 60_000

// notified is a webhook receiver: it records each notification's form body and content type and
// answers what answer says for the n-th one (200 when answer is nil).
type notified struct {
	url    string
	mu     sync.Mutex
	bodies []string
	types  []string
}

func receiver(t *testing.T, answer func(n int) int) *notified {
	t.Helper()
	rc := &notified{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, string(b))
		rc.types = append(rc.types, r.Header.Get("Content-Type"))
		n := len(rc.bodies)
		rc.mu.Unlock()
		if answer != nil {
			w.WriteHeader(answer(n))
		}
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/api/v1/webhooks/pspy?paymentProviderUuid=p1"
	return rc
}

func (rc *notified) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.bodies)
}

func delivering(t *testing.T) (*env, *delivery.Queue) {
	t.Helper()
	q := delivery.New(delivery.Config{TimeScale: fast})
	e := startWith(t, q)
	t.Cleanup(q.Close)
	return e, q
}

func idle(t *testing.T, q *delivery.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := q.WaitIdle(ctx); err != nil {
		t.Fatalf("deliveries not done: %v\n%+v", err, q.Deliveries())
	}
}

// paid creates a payment notifying rc and pays it on the checkout page.
func (e *env) paid(rc *notified, fields obj) string {
	e.t.Helper()
	fields["webhookUrl"] = rc.url
	id := e.payment(testKey, fields).str("id")
	if resp := e.submit(id, url.Values{"outcome": {"paid"}, "method": {"creditcard"}}); resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("checkout answered %d", resp.StatusCode)
	}
	return id
}

func TestANotificationIsPostedAsAFormAndRetriedUntilAnswered2xx(t *testing.T) {
	e, q := delivering(t)
	rc := receiver(t, func(n int) int { return []int{500, 502, 200}[min(n, 3)-1] })
	id := e.paid(rc, obj{})
	idle(t, q)
	if got := rc.got(); !slices.Equal(got, []string{"id=" + id, "id=" + id, "id=" + id}) || rc.types[0] != "application/x-www-form-urlencoded" {
		t.Fatalf("received %v (%v)", got, rc.types)
	}
	d := q.Deliveries()[0]
	if d.Provider != delivery.Pspy || d.PaymentID != id || d.Type != "notification" || d.Mode != "test" || d.URL != rc.url ||
		d.Status != delivery.Delivered || len(d.Attempts) != 3 || d.Attempts[0].Status != 500 || d.Attempts[2].Outcome != "delivered" {
		t.Fatalf("delivery %+v", d)
	}
}

func TestASubscriptionsPaymentsNotifyTheSubscriptionsWebhookURL(t *testing.T) {
	e, q := delivering(t)
	first, renewals := receiver(t, nil), receiver(t, nil)
	cust := e.customer(testKey)
	firstID := e.paid(first, obj{"sequenceType": "first", "customerId": cust})
	e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey, obj{
		"amount": obj{"currency": "EUR", "value": "10.00"}, "interval": "1 month", "description": "Plan Pro", "webhookUrl": renewals.url,
	})
	e.clock.Advance(t.Context(), 32*24*time.Hour)
	idle(t, q)
	if got := first.got(); !slices.Equal(got, []string{"id=" + firstID}) {
		t.Fatalf("the first payment's URL got %v", got)
	}
	got := renewals.got()
	if len(got) != 2 || got[0] == got[1] {
		t.Fatalf("the subscription's URL got %v, want its two charges", got)
	}
	for _, body := range got {
		v, _ := url.ParseQuery(body)
		if p := e.must(200, "GET", "/v2/payments/"+v.Get("id"), testKey, nil); p.str("subscriptionId") == "" || p.str("status") != "paid" {
			t.Fatalf("notified payment %v", p)
		}
	}
}

func TestRefundsAndChargebacksNotifyAndShowOnThePayment(t *testing.T) {
	e, q := delivering(t)
	rc := receiver(t, nil)
	id := e.paid(rc, obj{})
	e.must(201, "POST", "/v2/payments/"+id+"/refunds", testKey, obj{"amount": obj{"currency": "EUR", "value": "4.00"}})
	p := e.must(200, "GET", "/v2/payments/"+id, testKey, nil)
	if p.str("amountRefunded.value") != "4.00" || p.str("amountRemaining.value") != "6.00" || p.at("amountChargedBack") != nil || p.at("_links.chargebacks") != nil {
		t.Fatalf("after the refund: %v", p)
	}
	cb := e.must(201, "POST", "/payments/"+id+"/chargeback", testKey, nil)
	if cb.str("resource") != "chargeback" || cb.str("paymentId") != id || cb.str("amount.value") != "10.00" || cb.str("amount.currency") != "EUR" || cb.str("createdAt") == "" {
		t.Fatalf("chargeback %v", cb)
	}
	p = e.must(200, "GET", "/v2/payments/"+id+"?embed=chargebacks", testKey, nil)
	if p.str("status") != "paid" || p.str("amountChargedBack.value") != "10.00" || p.str("amountChargedBack.currency") != "EUR" ||
		p.str("_links.chargebacks.href") == "" || p.str("_embedded.chargebacks.0.id") != cb.str("id") || p.str("amountRemaining.value") != "0.00" {
		t.Fatalf("after the chargeback: %v", p)
	}
	problemOf(t, e.call("POST", "/v2/payments/"+id+"/refunds", testKey, "", obj{"amount": obj{"currency": "EUR", "value": "1.00"}}), 422, "")
	problemOf(t, e.call("POST", "/payments/"+id+"/chargeback", testKey, "", nil), 422, "")
	idle(t, q)
	if got := rc.got(); !slices.Equal(got, []string{"id=" + id, "id=" + id, "id=" + id}) {
		t.Fatalf("notifications %v, want paid, refunded and charged back", got)
	}
}

func TestAChargebackIsRefusedForBadInput(t *testing.T) {
	e, _ := delivering(t)
	open := e.payment(testKey, obj{}).str("id")
	rc := receiver(t, nil)
	paid := e.paid(rc, obj{})
	problemOf(t, e.call("POST", "/payments/"+paid+"/chargeback", "", "", nil), 401, "")
	problemOf(t, e.call("POST", "/payments/"+paid+"/chargeback", otherKey, "", nil), 404, "")
	problemOf(t, e.call("POST", "/payments/tr_unknown/chargeback", testKey, "", nil), 404, "")
	problemOf(t, e.call("POST", "/payments/"+open+"/chargeback", testKey, "", nil), 422, "")
	problemOf(t, e.call("POST", "/payments/"+paid+"/chargeback", testKey, "", "not json"), 400, "")
}
