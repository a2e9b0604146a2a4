package pspx_test

import (
	"net/http"
	"testing"
	"time"
)

// subscribe creates a subscription through the API, charged to the customer's default method.
func (e *env) subscribe(fields []string, kv ...string) (customer, sub string) {
	e.t.Helper()
	price, tax := e.catalog()
	customer = e.customer()
	pm := e.savedMethod(customer, fields)
	e.ok("POST", "/v1/customers/"+customer, "invoice_settings[default_payment_method]", pm)
	s := e.ok("POST", "/v1/subscriptions", append([]string{"customer", customer, "items[0][price]", price, "items[0][tax_rates][0]", tax}, kv...)...)
	return customer, s.str(e.t, "id")
}

func (e *env) invoices(customer string) []obj {
	e.t.Helper()
	return e.ok("GET", "/v1/invoices", "customer", customer, "limit", "100").objs(e.t, "data")
}

func TestAnAdvanceRenewsEveryPeriodThatEndedInTimeOrder(t *testing.T) {
	e := newEnv(t)
	cus, id := e.subscribe(card("4242424242424242"))
	first := e.ok("GET", "/v1/subscriptions/"+id)
	if first.str(t, "status") != "active" {
		t.Fatalf("new subscription: %v", first)
	}
	anchor := time.Unix(first.num(t, "current_period_start"), 0)
	e.advance(anchor.AddDate(0, 3, 0).Sub(e.clock.Now()) + time.Hour) // just past the third period end
	sub := e.ok("GET", "/v1/subscriptions/"+id)
	invs := e.invoices(cus)
	if len(invs) != 4 {
		t.Fatalf("%d invoices, want the first and three renewals", len(invs))
	}
	for i, inv := range invs[:3] { // newest first
		n := 3 - i
		line := inv.objs(t, "lines", "data")[0]
		if inv.str(t, "billing_reason") != "subscription_cycle" || inv.str(t, "status") != "paid" || inv.num(t, "amount_paid") != 1190 ||
			!time.Unix(line.num(t, "period", "start"), 0).Equal(anchor.AddDate(0, n, 0)) || inv.num(t, "period_end") != line.num(t, "period", "start") {
			t.Fatalf("renewal %d: %v", n, inv)
		}
	}
	if !time.Unix(sub.num(t, "current_period_start"), 0).Equal(anchor.AddDate(0, 3, 0)) || sub.str(t, "latest_invoice") != invs[0].str(t, "id") {
		t.Fatalf("subscription after renewals: %v", sub)
	}
	var paidAt []int64
	for _, ev := range e.sb.Events() {
		if ev.Type == "invoice.paid" {
			paidAt = append(paidAt, ev.Created.Unix())
		}
	}
	for i := 1; i < len(paidAt); i++ {
		if paidAt[i] <= paidAt[i-1] {
			t.Fatalf("renewals not in time order: %v", paidAt)
		}
	}
}

func TestADeclinedRenewalIsRetriedUntilTheThirdAttemptThenTheNextPeriodIsInvoicedAgain(t *testing.T) {
	e := newEnv(t)
	cus, id := e.subscribe(card("4242424242424242"))
	declining := e.savedMethod(cus, card("4000000000000341"))
	e.ok("POST", "/v1/customers/"+cus, "invoice_settings[default_payment_method]", declining)

	e.advance(month)
	sub := e.ok("GET", "/v1/subscriptions/"+id)
	renewal := e.ok("GET", "/v1/invoices/"+sub.str(t, "latest_invoice"))
	if sub.str(t, "status") != "past_due" || renewal.str(t, "status") != "open" || renewal.num(t, "attempt_count") != 1 {
		t.Fatalf("after the first attempt: %v\n%v", sub, renewal)
	}
	e.advance(time.Hour)
	if inv := e.ok("GET", "/v1/invoices/"+renewal.str(t, "id")); inv.num(t, "attempt_count") != 2 || inv.str(t, "status") != "open" {
		t.Fatalf("after the second attempt: %v", inv)
	}
	e.advance(time.Hour)
	inv := e.ok("GET", "/v1/invoices/"+renewal.str(t, "id"))
	sub = e.ok("GET", "/v1/subscriptions/"+id)
	if inv.num(t, "attempt_count") != 3 || inv.str(t, "status") != "uncollectible" || sub.str(t, "status") != "past_due" ||
		sub.num(t, "current_period_start") != renewal.objs(t, "lines", "data")[0].num(t, "period", "start") {
		t.Fatalf("after the third attempt: %v\n%v", inv, sub)
	}
	types := e.eventTypes()
	if count(types, "invoice.payment_failed") != 3 || count(types, "invoice.marked_uncollectible") != 1 || count(types, "customer.subscription.deleted") != 0 {
		t.Fatalf("events %v", types)
	}
	// The unpaid period ends: the next one is invoiced and tried again, and fails for good too.
	e.advance(month)
	e.advance(time.Hour)
	e.advance(time.Hour)
	next := e.ok("GET", "/v1/invoices/"+e.ok("GET", "/v1/subscriptions/"+id).str(t, "latest_invoice"))
	if next.str(t, "id") == renewal.str(t, "id") || next.str(t, "status") != "uncollectible" || next.str(t, "billing_reason") != "subscription_cycle" {
		t.Fatalf("the next period's renewal: %v", next)
	}
	if types := e.eventTypes(); count(types, "invoice.marked_uncollectible") != 2 {
		t.Fatalf("events %v", types)
	}
}

func TestPayingAPastDueRenewalReactivatesAndMovesThePeriodOn(t *testing.T) {
	e := newEnv(t)
	cus, id := e.subscribe(card("4242424242424242"))
	good := e.ok("GET", "/v1/customers/"+cus).str(t, "invoice_settings", "default_payment_method")
	declining := e.savedMethod(cus, card("4000000000000341"))
	e.ok("POST", "/v1/customers/"+cus, "invoice_settings[default_payment_method]", declining)
	before := e.ok("GET", "/v1/subscriptions/"+id)
	e.advance(month)
	past := e.ok("GET", "/v1/subscriptions/"+id)
	if past.num(t, "current_period_end") != before.num(t, "current_period_end") {
		t.Fatal("a declined renewal moved the period")
	}
	e.ok("POST", "/v1/invoices/"+past.str(t, "latest_invoice")+"/pay", "payment_method", good)
	now := e.ok("GET", "/v1/subscriptions/"+id)
	if now.str(t, "status") != "active" || now.num(t, "current_period_start") != before.num(t, "current_period_end") {
		t.Fatalf("after paying: %v", now)
	}
}

func TestCancelAtPeriodEndCancelsInsteadOfRenewing(t *testing.T) {
	e := newEnv(t)
	cus, id := e.subscribe(card("4242424242424242"))
	upd := e.ok("POST", "/v1/subscriptions/"+id, "cancel_at_period_end", "true")
	if upd.get(t, "cancel_at_period_end") != true || upd.num(t, "cancel_at") != upd.num(t, "current_period_end") || upd.get(t, "canceled_at") == nil {
		t.Fatalf("update: %v", upd)
	}
	e.advance(month)
	sub := e.ok("GET", "/v1/subscriptions/"+id)
	if sub.str(t, "status") != "canceled" || sub.num(t, "ended_at") != upd.num(t, "current_period_end") || len(e.invoices(cus)) != 1 {
		t.Fatalf("at the period end: %v", sub)
	}
	e.fails(http.StatusBadRequest, "POST", "/v1/subscriptions/"+id, "cancel_at_period_end", "false")
}

func TestAPriceChangeProratesIntoTheNextInvoiceOrInvoicesAtOnce(t *testing.T) {
	for _, behavior := range []string{"create_prorations", "always_invoice", "none"} {
		t.Run(behavior, func(t *testing.T) {
			e := newEnv(t)
			cus, id := e.subscribe(card("4242424242424242"))
			sub := e.ok("GET", "/v1/subscriptions/"+id)
			item := sub.objs(t, "items", "data")[0]
			prod := item.str(t, "price", "product")
			bigger := e.ok("POST", "/v1/prices", "product", prod, "unit_amount", "3000", "currency", "eur", "recurring[interval]", "month").str(t, "id")
			e.advance(15 * 24 * time.Hour)
			upd := e.ok("POST", "/v1/subscriptions/"+id, "items[0][id]", item.str(t, "id"), "items[0][price]", bigger, "proration_behavior", behavior)
			if upd.objs(t, "items", "data")[0].str(t, "price", "id") != bigger || upd.num(t, "current_period_end") != sub.num(t, "current_period_end") {
				t.Fatalf("updated: %v", upd)
			}
			invs := e.invoices(cus)
			switch behavior {
			case "always_invoice":
				inv := invs[0]
				lines := inv.objs(t, "lines", "data")
				if len(invs) != 2 || inv.str(t, "billing_reason") != "subscription_update" || inv.str(t, "status") != "paid" || len(lines) != 2 ||
					lines[0].num(t, "amount") >= 0 || lines[1].num(t, "amount") <= 0 || lines[0].get(t, "proration") != true {
					t.Fatalf("update invoice: %v", inv)
				}
			case "create_prorations":
				e.advance(month)
				renewal := e.invoices(cus)[0]
				if len(renewal.objs(t, "lines", "data")) != 3 || renewal.str(t, "billing_reason") != "subscription_cycle" {
					t.Fatalf("renewal does not carry the prorations: %v", renewal)
				}
			case "none":
				e.advance(month)
				renewal := e.invoices(cus)[0]
				if lines := renewal.objs(t, "lines", "data"); len(lines) != 1 || lines[0].num(t, "amount") != 3000 {
					t.Fatalf("renewal: %v", renewal)
				}
			}
		})
	}
}

func TestSubscriptionCreationWithoutAPaymentMethodIsRefused(t *testing.T) {
	e := newEnv(t)
	price, _ := e.catalog()
	cus := e.customer()
	e.fails(http.StatusBadRequest, "POST", "/v1/subscriptions", "customer", cus, "items[0][price]", price)
	e.fails(http.StatusBadRequest, "POST", "/v1/subscriptions", "customer", cus, "items[0][price]", e.oneTimePrice("100"))
	e.fails(http.StatusNotFound, "POST", "/v1/subscriptions", "customer", "cus_missing", "items[0][price]", price)
}
