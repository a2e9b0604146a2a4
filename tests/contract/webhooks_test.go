package contract

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/cmd/berth/stacktest"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/sandbox/delivery"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

func TestWebhookRoutes(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			t.Run("route 3 refuses what it cannot verify and answers another deployment's objects", e.pspxWebhookRefusals)
			t.Run("route 3 applies a provider's signed event once however often it arrives", e.pspxWebhookOnce)
			t.Run("route 4 ignores calls that name nothing of Berth's", e.pspyWebhookIgnored)
		})
	}
}

// postWebhook sends body to a webhook route as a provider would and returns status and JSON body.
func (e *env) postWebhook(t *testing.T, path, contentType, signature, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.stack.BaseURL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if signature != "" {
		req.Header.Set("pspx-signature", signature)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s answered %d with non-JSON %q", path, res.StatusCode, raw)
	}
	return res.StatusCode, out
}

// pspxSignature signs body as pspx does at time at.
func pspxSignature(secret string, at time.Time, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(fmt.Appendf(nil, "%d.%s", at.Unix(), body))
	return fmt.Sprintf("t=%d,v1=%s", at.Unix(), hex.EncodeToString(mac.Sum(nil)))
}

func wantAPIError(t *testing.T, status int, body map[string]any, wantStatus int, code string) {
	t.Helper()
	errs, _ := body["errors"].([]any)
	if status != wantStatus || len(errs) != 1 || errs[0].(map[string]any)["code"] != code {
		t.Fatalf("answer %d %v, want %d %s", status, body, wantStatus, code)
	}
}

func (e *env) pspxWebhookRefusals(t *testing.T) {
	const path = "/api/v1/webhooks/pspx"
	secret := e.other.Pspx.WebhookSecret
	for name, body := range map[string]string{
		"not JSON":       `{"id":`,
		"not an event":   `{"id":"in_1","object":"invoice"}`,
		"no data.object": `{"id":"evt_1","object":"event","type":"invoice.paid","data":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			status, out := e.postWebhook(t, path, "application/json", pspxSignature(secret, time.Now(), body), body)
			wantAPIError(t, status, out, 400, "[E4000]")
		})
	}
	event := func(host, customer string) string {
		return fmt.Sprintf(`{"id":"evt_refused","object":"event","type":"invoice.paid","livemode":false,"data":{"object":{"id":"in_1","object":"invoice","customer":%q,"metadata":{"host":%q}}}}`, customer, host)
	}
	// Another deployment's object: named, nothing else done (no signature needed to say so).
	status, out := e.postWebhook(t, path, "application/json", "", event("shop.elsewhere.example", "cus_1"))
	if status != 200 || out["received"] != true || out["wrongHost"] != true || out["host"] != "shop.elsewhere.example" || len(out) != 3 {
		t.Fatalf("wrong host: %d %v", status, out)
	}
	host := strings.TrimPrefix(e.stack.BaseURL, "http://")
	unknown := event(host, "cus_unknown")
	status, out = e.postWebhook(t, path, "application/json", pspxSignature(secret, time.Now(), unknown), unknown)
	wantAPIError(t, status, out, 400, "[E4000]") // a customer Berth did not create cannot be verified
}

func (e *env) pspxWebhookOnce(t *testing.T) {
	const path = "/api/v1/webhooks/pspx"
	p := e.ownPspxAccount(t)
	e.setUpCard(t, "4242 4242 4242 4242")
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(),
		jsonBody(map[string]any{"price": p.basic, "mode": "subscription", "quantity": 1, "test": true})).ok(t, 201)
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-subscriptions")), e.otherWrite(), "").ok(t, 200)
	subscribed := e.otherTenant(t)
	e.advanceClock(t, 32*24*time.Hour) // the provider ends the subscription at its period's end

	list := e.sandboxCall(t, p.key, http.MethodGet, "/v1/events", url.Values{"type": {"customer.subscription.deleted"}})
	events := list["data"].([]any)
	if len(events) != 1 {
		t.Fatalf("sandbox events: %v", list)
	}
	raw, _ := json.Marshal(events[0])
	body := string(raw)
	secret := e.other.Pspx.WebhookSecret
	now := time.Now()
	for name, sig := range map[string]string{
		"unsigned":          "",
		"another secret":    pspxSignature("whsec_other", now, body),
		"stale":             pspxSignature(secret, now.Add(-6*time.Minute), body),
		"for another body":  pspxSignature(secret, now, body+" "),
		"malformed":         "t=abc,v1=xyz",
		"from the future":   pspxSignature(secret, now.Add(6*time.Minute), body),
		"timestamp swapped": strings.Replace(pspxSignature(secret, now, body), fmt.Sprint(now.Unix()), fmt.Sprint(now.Unix()+1), 1),
	} {
		status, out := e.postWebhook(t, path, "application/json", sig, body)
		if status != 400 {
			t.Fatalf("%s: %d %v, want 400", name, status, out)
		}
	}
	if got := e.otherTenant(t); got["pspxSubscriptionId"] != subscribed["pspxSubscriptionId"] {
		t.Fatal("an unverified event changed the tenant")
	}

	// The verified event, delivered 20 times at once and then again: each answer is
	// {received:true}; the subscription ends once.
	var wg sync.WaitGroup
	answers := make([]map[string]any, 20)
	statuses := make([]int, 20)
	for i := range answers {
		wg.Go(func() {
			statuses[i], answers[i] = e.postWebhook(t, path, "application/json", pspxSignature(secret, time.Now(), body), body)
		})
	}
	wg.Wait()
	for i := range answers {
		if statuses[i] != 200 || answers[i]["received"] != true || len(answers[i]) != 1 {
			t.Fatalf("delivery %d: %d %v", i, statuses[i], answers[i])
		}
	}
	ended := e.otherTenant(t)
	if ended["pspxSubscriptionId"] != "" || ended["mode"] != "" || ended["pspxSubscriptionCancelAtPeriodEnd"] != false || ended["paidUntil"] != subscribed["paidUntil"] {
		t.Fatalf("tenant after the subscription ended: subscription %v mode %v cancel %v paidUntil %v (was %v)",
			ended["pspxSubscriptionId"], ended["mode"], ended["pspxSubscriptionCancelAtPeriodEnd"], ended["paidUntil"], subscribed["paidUntil"])
	}
	stored := e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: e.other.Pspx.ConnectionID, Provider: "pspx"})
	if len(stored) != 1 || stored[0].GetOutcome() != "applied" || stored[0].GetType() != "customer.subscription.deleted" || stored[0].GetAttempts() < 1 {
		t.Fatalf("stored calls: %v", stored)
	}
	// An operator's replay of the applied event changes nothing.
	res, err := webhookv1.NewWebhookAdminServiceClient(e.adminConn(t)).ReplayEvents(context.Background(), &webhookv1.ReplayEventsRequest{Id: stored[0].GetId()})
	if err != nil || res.GetApplied() != 1 {
		t.Fatalf("replay: %v, %v", res, err)
	}
	if again := e.otherTenant(t); again["pspxSubscriptionId"] != "" || again["paidUntil"] != ended["paidUntil"] {
		t.Fatalf("a replay changed the tenant: %v", again)
	}
}

func (e *env) pspyWebhookIgnored(t *testing.T) {
	for name, tc := range map[string]struct{ query, contentType, body string }{
		"no provider uuid":   {"", "application/x-www-form-urlencoded", "id=tr_abc"},
		"no payment id":      {"?paymentProviderUuid=" + e.demo.AppID, "application/x-www-form-urlencoded", ""},
		"an unknown uuid":    {"?paymentProviderUuid=8d7f1b2e-9c4a-4e7b-a1d2-3c4b5a6f7e80", "application/x-www-form-urlencoded", "id=tr_abc"},
		"a malformed uuid":   {"?paymentProviderUuid=%FF%FE", "application/json", `{"id":"tr_abc"}`},
		"a pspx connection":  {"?paymentProviderUuid=" + e.demo.Pspx.ConnectionID, "application/json", `{"id":"tr_abc"}`},
		"an unknown payment": {"?paymentProviderUuid=" + e.demo.PspyApp.ProviderUUID, "application/x-www-form-urlencoded", "id=tr_doesnotexist"},
	} {
		t.Run(name, func(t *testing.T) {
			status, out := e.postWebhook(t, "/api/v1/webhooks/pspy"+tc.query, tc.contentType, "", tc.body)
			if status != 200 || out["received"] != true || out["ignored"] != true || len(out) != 2 {
				t.Fatalf("%d %v, want {received:true, ignored:true}", status, out)
			}
		})
	}
}

// deliveriesOf are the sandboxes' deliveries of the provider event eventID.
func (e *env) deliveriesOf(eventID string) []delivery.Delivery {
	var out []delivery.Delivery
	for _, d := range e.stack.Sandboxes.Deliveries.Deliveries() {
		if d.EventID == eventID {
			out = append(out, d)
		}
	}
	return out
}

// adminConn dials the webhook module with the admin token.
func (e *env) adminConn(t *testing.T) grpc.ClientConnInterface {
	t.Helper()
	c, err := grpc.NewClient(e.stack.Addr("webhook"), append(grpcx.ClientOptions("", nil), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(e.adminToken)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (e *env) webhookEvents(t *testing.T, req *webhookv1.ListEventsRequest) []*webhookv1.Event {
	t.Helper()
	list, err := webhookv1.NewWebhookAdminServiceClient(e.adminConn(t)).ListEvents(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return list.GetEvents()
}

// pspxEffectFailureRetried breaks billing's access to the provider while a renewal is paid: the
// event is stored, its effect fails, route 3 answers 500 and the sandbox retries on its schedule;
// once access is back a retry applies the renewal, once.
func (e *env) pspxEffectFailureRetried(t *testing.T, p pspxPlans) {
	e.settle(t, 0)
	before := e.otherTenant(t)
	if before["pspxSubscriptionId"] == "" {
		t.Fatalf("the tenant has no subscription to renew: %v", before)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rotate := func(key string) {
		t.Helper()
		if _, err := e.admin.Billing.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{
			ConnectionId: e.other.Pspx.ConnectionID, TestSecretKey: key}); err != nil {
			t.Fatal(err)
		}
	}
	rotate("sk_test_" + stacktest.RandomHex(12)) // an account that knows none of the tenant's objects
	e.advanceClock(t, 32*24*time.Hour)
	failed := func() *webhookv1.Event {
		for _, ev := range e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: e.other.Pspx.ConnectionID, Outcome: "failed"}) {
			if ev.GetType() == "invoice.paid" {
				return ev
			}
		}
		return nil
	}
	var ev *webhookv1.Event
	for ev == nil || ev.GetAttempts() < 2 {
		if ctx.Err() != nil {
			t.Fatalf("no retried failure of invoice.paid: %v", ev)
		}
		time.Sleep(20 * time.Millisecond)
		ev = failed()
	}
	if tn := e.otherTenant(t); tn["paidUntil"] != before["paidUntil"] {
		t.Fatalf("a failed effect changed the tenant: %v", tn["paidUntil"])
	}

	rotate(p.key)
	e.settle(t, 0) // the next retries are answered 2xx
	// Billing hands the renewal to the tenant service in the same call, but when that hand-over
	// times out (a loaded machine) the renewal is still stored and its event repairs the tenant
	// shortly after (docs/billing.md): the tenant's read follows, not necessarily at once.
	var after map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for after = e.otherTenant(t); after["paidUntil"].(string) <= before["paidUntil"].(string); after = e.otherTenant(t) {
		if time.Now().After(deadline) {
			t.Fatalf("the retried renewal did not apply: paidUntil %v then %v\nstored calls: %v\nsandbox deliveries of %s: %+v",
				before["paidUntil"], after["paidUntil"], e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: e.other.Pspx.ConnectionID}),
				ev.GetProviderEventId(), e.deliveriesOf(ev.GetProviderEventId()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	list := e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: e.other.Pspx.ConnectionID})
	var stored *webhookv1.Event
	for _, got := range list {
		if got.GetId() == ev.GetId() {
			stored = got
		}
	}
	if stored == nil || stored.GetOutcome() != "applied" || stored.GetAttempts() < 3 || stored.GetAppliedAt() == "" {
		t.Fatalf("the stored call after its retries: %v", stored)
	}
	var refused, delivered int
	for _, d := range e.deliveriesOf(ev.GetProviderEventId()) {
		for _, a := range d.Attempts {
			switch a.Status {
			case http.StatusInternalServerError:
				refused++
			case http.StatusOK:
				delivered++
			}
		}
	}
	if refused < 2 || delivered != 1 {
		t.Fatalf("sandbox attempts: %d answered 500, %d answered 200", refused, delivered)
	}
	// Another renewal period later, paidUntil has moved exactly one period per paid invoice.
	e.settle(t, 32*24*time.Hour)
	if again := e.otherTenant(t); again["paidUntil"].(string) <= after["paidUntil"].(string) {
		t.Fatalf("the next renewal: %v", again["paidUntil"])
	}
}
