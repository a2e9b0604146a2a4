package pspy_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestMandatesAreListedNewestFirstInPages(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	var ids []string
	for range 3 {
		ids = append([]string{e.mandate(testKey, cust, "paid", "creditcard")}, ids...)
	}
	path := "/v2/customers/" + cust + "/mandates"
	first := e.must(200, "GET", path+"?limit=2", testKey, nil)
	if first.at("count") != float64(2) || first.str("_embedded.mandates.0.id") != ids[0] || first.str("_embedded.mandates.1.id") != ids[1] || first.at("_links.previous") != nil {
		t.Fatalf("first page %v", first)
	}
	next, err := url.Parse(first.str("_links.next.href"))
	if err != nil || next.Query().Get("from") != ids[2] || !strings.HasPrefix(next.String(), e.base+path) {
		t.Fatalf("next link %q", first.str("_links.next.href"))
	}
	second := e.must(200, "GET", strings.TrimPrefix(next.String(), e.base), testKey, nil)
	if second.at("count") != float64(1) || second.str("_embedded.mandates.0.id") != ids[2] || second.at("_links.next") != nil || second.str("_links.previous.href") == "" {
		t.Fatalf("second page %v", second)
	}
	for _, q := range []string{"?limit=0", "?limit=251", "?limit=x", "?from=mdt_unknown"} {
		problemOf(t, e.call("GET", path+q, testKey, "", nil), 400, strings.Split(q[1:], "=")[0])
	}
	problemOf(t, e.call("GET", "/v2/customers/cst_unknown/mandates", testKey, "", nil), 404, "")
}

func TestRevokingAMandateMakesItInvalid(t *testing.T) {
	e := start(t)
	cust, other := e.customer(testKey), e.customer(testKey)
	md := e.mandate(testKey, cust, "paid", "creditcard")
	problemOf(t, e.call("DELETE", "/v2/customers/"+other+"/mandates/"+md, testKey, "", nil), 404, "")
	problemOf(t, e.call("DELETE", "/v2/customers/"+cust+"/mandates/"+md, otherKey, "", nil), 404, "")
	if a := e.call("DELETE", "/v2/customers/"+cust+"/mandates/"+md, testKey, "", nil); a.status != 204 {
		t.Fatalf("revoke: %d %s", a.status, a.raw)
	}
	if list := e.must(200, "GET", "/v2/customers/"+cust+"/mandates", testKey, nil); list.str("_embedded.mandates.0.status") != "invalid" {
		t.Fatalf("revoked mandate %v", list.at("_embedded.mandates.0"))
	}
	problemOf(t, e.call("POST", "/v2/customers/"+cust+"/subscriptions", testKey, "", subscriptionBody(nil)), 422, "")
}

// subscriptionBody is a valid subscription with some fields changed.
func subscriptionBody(fields obj) obj {
	b := obj{
		"amount": obj{"currency": "EUR", "value": "25.00"}, "interval": "1 month", "description": "Plan Pro",
		"webhookUrl": "https://shop.example/subscriptions", "metadata": obj{"plan": "pro"},
	}
	for k, v := range fields {
		b[k] = v
	}
	return b
}

func TestSubscriptionRequestsAreValidated(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	md := e.mandate(testKey, cust, "paid", "creditcard")
	other := e.customer(testKey)
	otherMandate := e.mandate(testKey, other, "paid", "creditcard")
	yesterday := e.clock.Now().AddDate(0, 0, -1).Format(time.DateOnly)
	cases := []struct {
		name  string
		body  obj
		field string
	}{
		{"unknown interval unit", subscriptionBody(obj{"interval": "1 fortnight"}), "interval"},
		{"zero interval", subscriptionBody(obj{"interval": "0 days"}), "interval"},
		{"no interval", subscriptionBody(obj{"interval": nil}), "interval"},
		{"no description", subscriptionBody(obj{"description": ""}), "description"},
		{"amount with one decimal", subscriptionBody(obj{"amount": obj{"currency": "EUR", "value": "25.0"}}), "amount.value"},
		{"start date in the past", subscriptionBody(obj{"startDate": yesterday}), "startDate"},
		{"start date not a date", subscriptionBody(obj{"startDate": "01/02/2030"}), "startDate"},
		{"another customer's mandate", subscriptionBody(obj{"mandateId": otherMandate}), "mandateId"},
		{"bad webhook URL", subscriptionBody(obj{"webhookUrl": "ftp://x"}), "webhookUrl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problemOf(t, e.call("POST", "/v2/customers/"+cust+"/subscriptions", testKey, "", c.body), 422, c.field)
		})
	}
	sub := e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey, subscriptionBody(obj{"mandateId": md}))
	if sub.str("mandateId") != md || sub.str("status") != "active" || sub.str("_links.mandate.href") == "" {
		t.Fatalf("subscription on a named mandate %v", sub)
	}
	problemOf(t, e.call("GET", "/v2/customers/"+other+"/subscriptions/"+sub.str("id"), testKey, "", nil), 404, "")
	problemOf(t, e.call("POST", "/v2/customers/cst_unknown/subscriptions", testKey, "", subscriptionBody(nil)), 404, "")
}

func TestSubscriptionsChargeWhenTheClockReachesEachPaymentDate(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	md := e.mandate(testKey, cust, "paid", "creditcard")
	today := e.clock.Now().Format(time.DateOnly)
	before := len(e.sb.Notifications())
	sub := e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey, subscriptionBody(nil))
	id := sub.str("id")
	if !strings.HasPrefix(id, "sub_") || sub.str("resource") != "subscription" || sub.str("status") != "active" ||
		sub.str("startDate") != today || sub.str("nextPaymentDate") != today || sub.str("interval") != "1 month" ||
		sub.str("customerId") != cust || sub.str("metadata.plan") != "pro" || sub.str("mode") != "test" {
		t.Fatalf("subscription %v", sub)
	}
	if len(e.sb.Notifications()) != before {
		t.Fatal("creating the subscription charged it")
	}

	// Today's start date is charged by the next advance, however small.
	e.clock.Advance(t.Context(), time.Second)
	charges := e.sb.Notifications()[before:]
	if len(charges) != 1 || charges[0].WebhookURL != "https://shop.example/subscriptions" {
		t.Fatalf("charges after the first advance: %+v", charges)
	}
	p := e.must(200, "GET", "/v2/payments/"+charges[0].PaymentID, testKey, nil)
	if p.str("status") != "paid" || p.str("sequenceType") != "recurring" || p.str("subscriptionId") != id ||
		p.str("mandateId") != md || p.str("customerId") != cust || p.str("amount.value") != "25.00" || p.str("description") != "Plan Pro" {
		t.Fatalf("renewal payment %v", p)
	}
	start, _ := time.Parse(time.DateOnly, today)
	nextMonth := time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	want := nextMonth.AddDate(0, 0, min(start.Day(), nextMonth.AddDate(0, 1, -1).Day())-1).Format(time.DateOnly)
	if got := e.must(200, "GET", "/v2/customers/"+cust+"/subscriptions/"+id, testKey, nil); got.str("nextPaymentDate") != want {
		t.Fatalf("next payment date %q after one charge from %s, want %s", got.str("nextPaymentDate"), today, want)
	}

	// Three months at once make three charges, in date order.
	e.clock.Advance(t.Context(), 93*24*time.Hour)
	charges = e.sb.Notifications()[before+1:]
	if len(charges) != 3 {
		t.Fatalf("%d charges over three months", len(charges))
	}
	for i, n := range charges {
		p := e.must(200, "GET", "/v2/payments/"+n.PaymentID, testKey, nil)
		paidAt, _ := time.Parse(time.RFC3339, p.str("paidAt"))
		if p.str("subscriptionId") != id || p.str("status") != "paid" || !paidAt.Equal(n.At) || i > 0 && !n.At.After(charges[i-1].At) {
			t.Fatalf("charge %d: %+v %v", i, n, p)
		}
	}
}

func TestSubscriptionsOnAFailingMandateProduceFailedPayments(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	e.mandate(testKey, cust, "paid-recurring-fails", "directdebit")
	sub := e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey, subscriptionBody(obj{"interval": "14 days"}))
	before := len(e.sb.Notifications())
	e.clock.Advance(t.Context(), 15*24*time.Hour)
	charges := e.sb.Notifications()[before:]
	if len(charges) != 2 {
		t.Fatalf("%d charges over 15 days of a 14-day subscription started today", len(charges))
	}
	for _, n := range charges {
		if p := e.must(200, "GET", "/v2/payments/"+n.PaymentID, testKey, nil); p.str("status") != "failed" || p.str("failedAt") == "" || p.str("subscriptionId") != sub.str("id") {
			t.Fatalf("renewal on a failing mandate %v", p)
		}
	}
	if got := e.must(200, "GET", "/v2/customers/"+cust+"/subscriptions/"+sub.str("id"), testKey, nil); got.str("status") != "active" {
		t.Fatalf("subscription after failed charges %v", got)
	}
}

func TestARevokedNamedMandateFailsTheRenewal(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	md := e.mandate(testKey, cust, "paid", "creditcard")
	e.mandate(testKey, cust, "paid", "creditcard") // a valid one the subscription does not name
	e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey, subscriptionBody(obj{"mandateId": md}))
	e.call("DELETE", "/v2/customers/"+cust+"/mandates/"+md, testKey, "", nil)
	before := len(e.sb.Notifications())
	e.clock.Advance(t.Context(), time.Hour)
	n := e.sb.Notifications()[before:]
	if len(n) != 1 {
		t.Fatalf("%d charges", len(n))
	}
	if p := e.must(200, "GET", "/v2/payments/"+n[0].PaymentID, testKey, nil); p.str("status") != "failed" {
		t.Fatalf("renewal on a revoked mandate %v", p)
	}
}

func TestCanceledSubscriptionsNeverCharge(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	e.mandate(testKey, cust, "paid", "creditcard")
	path := "/v2/customers/" + cust + "/subscriptions/"
	id := e.must(201, "POST", strings.TrimSuffix(path, "/"), testKey, subscriptionBody(nil)).str("id")
	canceled := e.must(200, "DELETE", path+id, testKey, nil)
	if canceled.str("status") != "canceled" || canceled.str("canceledAt") == "" || canceled.at("nextPaymentDate") != nil {
		t.Fatalf("canceled subscription %v", canceled)
	}
	before := len(e.sb.Notifications())
	e.clock.Advance(t.Context(), 62*24*time.Hour)
	if n := e.sb.Notifications()[before:]; len(n) != 0 {
		t.Fatalf("a canceled subscription charged: %+v", n)
	}
	if got := e.must(200, "GET", path+id, testKey, nil); got.str("status") != "canceled" {
		t.Fatalf("fetched %v", got)
	}
	problemOf(t, e.call("DELETE", path+id, testKey, "", nil), 422, "")
	problemOf(t, e.call("DELETE", path+"sub_unknown", testKey, "", nil), 404, "")
}

func TestSubscriptionsFallingDueTogetherRenewInDateOrder(t *testing.T) {
	e := start(t)
	cust := e.customer(testKey)
	e.mandate(testKey, cust, "paid", "creditcard")
	day := func(n int) string { return e.clock.Now().AddDate(0, 0, n).Format(time.DateOnly) }
	daily := e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey,
		subscriptionBody(obj{"interval": "1 day", "startDate": day(1), "description": "daily"})).str("id")
	weekly := e.must(201, "POST", "/v2/customers/"+cust+"/subscriptions", testKey,
		subscriptionBody(obj{"interval": "1 week", "startDate": day(2), "description": "weekly"})).str("id")
	before := len(e.sb.Notifications())
	e.clock.Advance(t.Context(), 10*24*time.Hour)
	charges := e.sb.Notifications()[before:]
	count := map[string]int{}
	for i, n := range charges {
		p := e.must(200, "GET", "/v2/payments/"+n.PaymentID, testKey, nil)
		count[p.str("subscriptionId")]++
		if i > 0 && n.At.Before(charges[i-1].At) {
			t.Fatalf("charge %d at %v comes after one at %v", i, n.At, charges[i-1].At)
		}
	}
	if count[daily] != 10 || count[weekly] != 2 {
		t.Fatalf("charges per subscription %v, want 10 daily and 2 weekly", count)
	}
}
