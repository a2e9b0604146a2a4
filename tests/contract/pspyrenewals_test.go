package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/services/sandbox/delivery"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// TestPspyRecurringPaymentsThroughSandboxDeliveries drives pspy subscriptions as in production:
// the sandbox charges each subscription's mandate every period and calls route 4 (the webhookUrl
// billing gave the subscription) with the payment's id, every call sent three times at once.
func TestPspyRecurringPaymentsThroughSandboxDeliveries(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.pspyRenewals(t)
		})
	}
}

// pspyTenant is a tenant of one of the seeded pspy apps.
type pspyTenant struct {
	app  seed.PspyDemo
	read map[string]string
}

func pspyTenantOf(d seed.PspyDemo) pspyTenant {
	return pspyTenant{app: d, read: creds(d.ReadKey, "read", d.AppID)}
}

// subscribe pays a monthly subscription on the sandbox's test page with the outcome chosen.
func (e *env) pspySubscribe(t *testing.T, p pspyTenant, outcome string) map[string]any {
	t.Helper()
	write := creds(p.app.WriteKey, "write", p.app.AppID)
	_, payURL := e.createCheckout(t, write, p.app.TenantID, p.app.AppID, checkoutBody(p.app.Prices.Monthly, p.app.TaxRate, "subscription", nil))
	if got := e.pay(t, payURL, url.Values{"method": {"creditcard"}, "outcome": {outcome}}).Query().Get("status"); got != "completed" {
		t.Fatalf("checkout status %s", got)
	}
	tn := e.tenant(t, p.app.TenantID, p.read)
	if !strings.HasPrefix(fmt.Sprint(tn["pspxSubscriptionId"]), "sub_") || tn["paidUntil"] == "" {
		t.Fatalf("tenant after the checkout: %v", tn)
	}
	return tn
}

func (e *env) pspyRenewals(t *testing.T) {
	if err := e.stack.Sandboxes.Deliveries.SetFaults(delivery.Faults{Duplicate: 2}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stack.Sandboxes.Deliveries.ClearFaults)
	payingKey := e.ownPspyAccount(t) // the paying tenant's account, so the test can refund and charge back
	paying, failing := pspyTenantOf(e.demo.PspyApp), pspyTenantOf(e.other.PspyApp)
	paid := e.pspySubscribe(t, paying, "paid")
	failed := e.pspySubscribe(t, failing, "paid-recurring-fails")
	e.settlePspy(t, 0) // the checkouts' own notifications

	// The subscription starts on the date the first payment paid until; each recurring payment
	// pays until the next charge date, a calendar month later counted from that start.
	firstPaidUntil := parseTime(t, paid["paidUntil"])
	start := time.Date(firstPaidUntil.Year(), firstPaidUntil.Month(), firstPaidUntil.Day(), 0, 0, 0, 0, time.UTC)
	chargeDate := func(n int) time.Time {
		d := start.AddDate(0, n, 0)
		if d.Day() != start.Day() {
			d = d.AddDate(0, 0, -d.Day())
		}
		return d
	}
	for n := 1; n <= 3; n++ {
		e.settlePspy(t, 32*24*time.Hour) // one charge date passes: each subscription is charged once
		tn := e.tenant(t, paying.app.TenantID, paying.read)
		if got := parseTime(t, tn["paidUntil"]); !got.Equal(chargeDate(n)) || tn["paymentFailed"] != false || tn["freezed"] != false ||
			tn["pspxSubscriptionId"] != paid["pspxSubscriptionId"] {
			t.Fatalf("period %d: paidUntil %v, want %v; tenant %v", n, got, chargeDate(n), tn)
		}
		fn := e.tenant(t, failing.app.TenantID, failing.read)
		if fn["paymentFailed"] != true || fn["paymentFailedCount"] != float64(n) || fn["paymentFailedDate"] == "" ||
			fn["freezed"] != (n == 3) || fn["freezedDueFailedPayment"] != (n == 3) || fn["paidUntil"] != failed["paidUntil"] ||
			fn["pspxSubscriptionId"] != failed["pspxSubscriptionId"] {
			t.Fatalf("period %d: want %d failures, freezed %v; tenant %v", n, n, n == 3, fn)
		}
	}

	// Every call reached route 4 three times and was applied, none failed.
	renewals := e.pspyNotified(paying.app.ProviderUUID)
	for _, conn := range []string{paying.app.ProviderUUID, failing.app.ProviderUUID} {
		if bad := e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: conn, Outcome: "failed"}); len(bad) > 0 {
			t.Fatalf("route 4 calls that failed: %v", bad)
		}
	}
	calls := map[string]int{}
	for _, ev := range e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: paying.app.ProviderUUID, Limit: 1000}) {
		if ev.GetOutcome() != "applied" {
			t.Fatalf("route 4 call %v", ev)
		}
		calls[ev.GetProviderEventId()]++
	}
	// renewals[0] is the checkout's own payment; then one recurring payment per period.
	if len(renewals) != 4 {
		t.Fatalf("payments notified for the paying tenant: %v", renewals)
	}
	for _, id := range renewals {
		if calls[id] != 3 {
			t.Fatalf("route 4 stored %d calls for %s, want 3 (%v)", calls[id], id, calls)
		}
	}

	// A refund of a renewal is the merchant's decision: the tenant keeps what it paid for and
	// nothing is applied again.
	before := e.tenant(t, paying.app.TenantID, paying.read)
	e.pspyCall(t, payingKey, "/v2/payments/"+renewals[2]+"/refunds", `{"amount":{"currency":"EUR","value":"5.00"}}`)
	e.settlePspy(t, 0)
	if tn := e.tenant(t, paying.app.TenantID, paying.read); tn["paidUntil"] != before["paidUntil"] || tn["paymentFailed"] != false {
		t.Fatalf("after a refund: %v", tn)
	}
	// The bank takes the latest renewal back: one failed payment, access already paid stays.
	e.pspyCall(t, payingKey, "/payments/"+renewals[3]+"/chargeback", `{}`)
	e.settlePspy(t, 0)
	tn := e.tenant(t, paying.app.TenantID, paying.read)
	if tn["paidUntil"] != before["paidUntil"] || tn["paymentFailed"] != true || tn["paymentFailedCount"] != 1.0 || tn["freezed"] != false {
		t.Fatalf("after a chargeback: %v", tn)
	}
	// The next period is paid again: the failure clears.
	e.settlePspy(t, 32*24*time.Hour)
	if tn := e.tenant(t, paying.app.TenantID, paying.read); !parseTime(t, tn["paidUntil"]).Equal(chargeDate(4)) || tn["paymentFailed"] != false ||
		tn["paymentFailedCount"] != 0.0 {
		t.Fatalf("after the next paid period: %v", tn)
	}

	// Every payment notified again, a hundred times each (half at once, half in a row), in any
	// order: nothing changes for either tenant.
	e.settlePspy(t, 0)
	paidBefore, failedBefore := e.tenant(t, paying.app.TenantID, paying.read), e.tenant(t, failing.app.TenantID, failing.read)
	var wg sync.WaitGroup
	for _, tenant := range []pspyTenant{paying, failing} {
		for _, id := range e.pspyNotified(tenant.app.ProviderUUID) {
			wg.Go(func() {
				path := "/api/v1/webhooks/pspy?paymentProviderUuid=" + tenant.app.ProviderUUID
				var inner sync.WaitGroup
				for i := range 100 {
					send := func() {
						if status, out := e.postWebhook(t, path, "application/x-www-form-urlencoded", "", "id="+id); status != 200 || out["received"] != true {
							t.Errorf("route 4 for %s: %d %v", id, status, out)
						}
					}
					if i%2 == 0 {
						inner.Go(send)
					} else {
						send()
					}
				}
				inner.Wait()
			})
		}
	}
	wg.Wait()
	for _, c := range []struct {
		tenant pspyTenant
		before map[string]any
	}{{paying, paidBefore}, {failing, failedBefore}} {
		after := e.tenant(t, c.tenant.app.TenantID, c.tenant.read)
		for _, f := range []string{"paidUntil", "paymentFailed", "paymentFailedCount", "paymentFailedDate", "freezed", "freezedDueFailedPayment", "pspxSubscriptionId", "mode"} {
			if after[f] != c.before[f] {
				t.Fatalf("a hundred redeliveries changed %s: %v, then %v", f, c.before[f], after[f])
			}
		}
		if bad := e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: c.tenant.app.ProviderUUID, Outcome: "failed"}); len(bad) > 0 {
			t.Fatalf("route 4 calls that failed: %v", bad)
		}
	}
}

// settlePspy advances the sandbox clock by d and waits until every pspy webhook call it caused
// (and any before) was answered 2xx, so route 5 shows what the calls did; pspx deliveries are
// not its concern.
func (e *env) settlePspy(t *testing.T, d time.Duration) {
	t.Helper()
	e.advanceClock(t, d)
	var ids []string
	for _, dl := range e.stack.Sandboxes.Deliveries.Deliveries() {
		if dl.Provider == delivery.Pspy {
			ids = append(ids, dl.ID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !e.stack.Sandboxes.Deliveries.Await(ctx, ids...) {
		t.Fatalf("pspy webhook deliveries: %+v", e.stack.Sandboxes.Deliveries.Deliveries())
	}
}

// pspyNotified lists the payments the pspy sandbox called a connection's route 4 about, in the
// order of their first call.
func (e *env) pspyNotified(connectionID string) []string {
	var ids []string
	for _, n := range e.stack.Sandboxes.Pspy.Notifications() {
		if strings.Contains(n.WebhookURL, "paymentProviderUuid="+connectionID) && !slices.Contains(ids, n.PaymentID) {
			ids = append(ids, n.PaymentID)
		}
	}
	return ids
}

// pspyCall POSTs a JSON body to the pspy sandbox with the account's key and expects 201.
func (e *env) pspyCall(t *testing.T, key, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.stack.Sandboxes.PspyURL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated || !json.Valid(raw) {
		t.Fatalf("pspy sandbox POST %s: %d %s", path, res.StatusCode, raw)
	}
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(v))
	if err != nil {
		t.Fatalf("not a time: %v", v)
	}
	return at
}
