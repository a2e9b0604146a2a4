package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// TestASubscriptionsWholeLifeDeliveredAHundredTimesShuffledAppliesEachEffectOnce lets a tenant's
// money live without webhooks (units bought; a subscription renewed, declined for good, renewed,
// cancelled, ended), then delivers
// every event of that life to route 3 a hundred times each (half concurrently, half one after
// the other), in shuffled order: the tenant ends as in-order delivery leaves it, and each money
// effect happened exactly once.
func TestASubscriptionsWholeLifeDeliveredAHundredTimesShuffledAppliesEachEffectOnce(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.wholeLifeShuffled(t)
		})
	}
}

func (e *env) wholeLifeShuffled(t *testing.T) {
	// The account has no webhook endpoint: nothing reaches Berth until the test delivers it,
	// signed with a secret the connection knows.
	p := e.ownPspxAccount(t)
	secret := "whsec_" + stacktest.RandomHex(16)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := e.admin.Billing.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{
		ConnectionId: e.other.Pspx.ConnectionID, TestWebhookSecret: secret}); err != nil {
		t.Fatal(err)
	}
	// Units bought through a checkout; a subscription renewed once, declined for good once, then
	// renewed again; cancelled; ended.
	_, payURL := e.createCheckout(t, e.otherWrite(), e.other.TenantID, e.other.AppID,
		checkoutBody(p.oneTime, p.tax, "payment", map[string]any{"quantity": 2}))
	if status := e.pay(t, payURL, card("4242 4242 4242 4242")).Query().Get("status"); status != "completed" {
		t.Fatalf("units checkout: %s", status)
	}
	e.setUpCard(t, "4242 4242 4242 4242")
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(),
		jsonBody(map[string]any{"price": p.basic, "mode": "subscription", "quantity": 1, "test": true})).ok(t, 201)
	sub := e.otherTenant(t)["pspxSubscriptionId"].(string)
	e.advanceClock(t, 32*24*time.Hour) // renewal 1, paid
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherWrite(), "").ok(t, 200)
	e.setUpCard(t, "4000 0000 0000 0341")
	e.advanceClock(t, 31*24*time.Hour) // renewal 2, declined
	e.advanceClock(t, 2*time.Hour)
	e.advanceClock(t, 2*time.Hour) // uncollectible
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherWrite(), "").ok(t, 200)
	e.setUpCard(t, "4242 4242 4242 4242")
	e.advanceClock(t, 31*24*time.Hour) // renewal 3, paid
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-subscriptions")), e.otherWrite(), "").ok(t, 200)
	e.advanceClock(t, 32*24*time.Hour) // the period ends: the subscription is deleted
	ended := e.sandboxCall(t, p.key, http.MethodGet, "/v1/subscriptions/"+sub, nil)
	if ended["status"] != "canceled" {
		t.Fatalf("the sandbox's subscription: %v", ended)
	}
	unaware := e.otherTenant(t)
	if unaware["pspxSubscriptionId"] != sub {
		t.Fatalf("without webhooks the tenant still has its subscription: %v", unaware["pspxSubscriptionId"])
	}

	events := e.customerEvents(t, p.key)
	t.Logf("delivering %d events a hundred times each", len(events))
	rand.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	var wg sync.WaitGroup
	statuses := make(chan int, len(events)*100)
	for _, body := range events {
		wg.Go(func() {
			var inner sync.WaitGroup
			for range 50 {
				inner.Go(func() { statuses <- e.deliverSigned(t, secret, body) })
			}
			for range 50 {
				statuses <- e.deliverSigned(t, secret, body)
			}
			inner.Wait()
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusOK {
			t.Fatalf("a delivery answered %d", s)
		}
	}

	// The state in-order delivery leaves: the units, the subscription ended, paid access to the
	// end of its last paid period, the failure cleared by the renewal after it.
	tn := e.otherTenant(t)
	paidUntil := time.Unix(int64(ended["current_period_end"].(float64)), 0).UTC().Format(time.RFC3339)
	if tn["pspxSubscriptionId"] != "" || tn["mode"] != "payment" || tn["paidUnits"] != "2" || tn["paidUntil"] != paidUntil ||
		tn["pspxSubscriptionCancelAtPeriodEnd"] != false || tn["paymentFailed"] != false || tn["paymentFailedCount"] != 0.0 || tn["freezed"] != false {
		t.Fatalf("after the shuffled deliveries (paidUntil want %s): %v", paidUntil, tn)
	}
	stored := e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: e.other.Pspx.ConnectionID, Limit: 1000})
	seen := map[string]int{}
	for _, ev := range stored {
		seen[ev.GetProviderEventId()]++
		if ev.GetOutcome() != "applied" && ev.GetOutcome() != "ignored" {
			t.Fatalf("stored call %v", ev)
		}
	}
	if len(seen) != len(events) || len(stored) != len(events) {
		t.Fatalf("%d events delivered, %d stored for %d event ids", len(events), len(stored), len(seen))
	}
	// Each payment's effect once. The declined renewal counts only when it is handled before the
	// renewal that paid after it (in-order delivery); handled later it is stale news.
	want := map[string]int{"billing.payment.one_time": 1, "billing.subscription.started": 1, "billing.subscription.cancelled": 1,
		"billing.subscription.renewed": 2, "billing.subscription.ended": 1}
	e.wantMoneyEvents(t, e.other.TenantID, want, "billing.payment.failed")
}

// customerEvents lists the sandbox account's events about a customer (the ones route 3 acts on),
// as the provider delivers them.
func (e *env) customerEvents(t *testing.T, key string) []string {
	t.Helper()
	var out []string
	q := url.Values{"limit": {"100"}}
	for {
		page := e.sandboxCall(t, key, http.MethodGet, "/v1/events", q)
		data := page["data"].([]any)
		for _, ev := range data {
			obj := ev.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
			if c, _ := obj["customer"].(string); c != "" || obj["object"] == "customer" {
				raw, _ := json.Marshal(ev)
				out = append(out, string(raw))
			}
		}
		if page["has_more"] != true || len(data) == 0 {
			return out
		}
		q.Set("starting_after", data[len(data)-1].(map[string]any)["id"].(string))
	}
}

// deliverSigned posts an event to route 3 as the provider would, signed now.
func (e *env) deliverSigned(t *testing.T, secret, body string) int {
	req, _ := http.NewRequest(http.MethodPost, e.stack.BaseURL+"/api/v1/webhooks/pspx", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("pspx-signature", pspxSignature(secret, time.Now(), body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// moneyEventTypes are the types of billing's MoneyChanged events.
var moneyEventTypes = map[eventsv1.Type]bool{
	billingv1.EventPaymentOneTime: true, billingv1.EventSubscriptionStarted: true, billingv1.EventSubscriptionRenewed: true,
	billingv1.EventSubscriptionChanged: true, billingv1.EventSubscriptionCancelled: true, billingv1.EventSubscriptionEnded: true,
	billingv1.EventPaymentFailed: true, billingv1.EventTenantFrozen: true, billingv1.EventTenantUnfrozen: true,
}

// wantMoneyEvents reads billing's stream until the tenant's money events number exactly want, by
// type, and stay so for a second (a late extra one fails the test). An event of an optional type
// may appear once, or not at all.
func (e *env) wantMoneyEvents(t *testing.T, tenantID string, want map[string]int, optional ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bus := e.stack.Bus
	cons, err := bus.JS.OrderedConsumer(ctx, bus.Stream("billing"), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var settledAt time.Time
	for {
		batch, err := cons.FetchNoWait(500)
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			var env struct {
				Type string `json:"type"`
				Data struct {
					TenantID string `json:"tenantId"`
				} `json:"data"`
			}
			if json.Unmarshal(msg.Data(), &env) == nil && env.Data.TenantID == tenantID && moneyEventTypes[eventsv1.Type(env.Type)] {
				got[env.Type]++
			}
		}
		counted := maps.Clone(got)
		for _, typ := range optional {
			if counted[typ] <= 1 {
				delete(counted, typ)
			}
		}
		match := fmt.Sprint(counted) == fmt.Sprint(want)
		switch {
		case match && settledAt.IsZero():
			settledAt = time.Now()
		case !match:
			settledAt = time.Time{}
		}
		if match && time.Since(settledAt) > time.Second {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("money events of the tenant %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
