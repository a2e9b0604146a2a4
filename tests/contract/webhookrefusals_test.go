package contract

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/stacktest"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// TestRoute3RecordsAnEventAboutAnObjectTheProviderDoesNotHaveAsRejectedAndAnswers200 posts to
// route 3 a correctly signed event about an invoice the provider's account does not have, for a
// customer Berth created there, twice as a provider's retry would: each answer is 200
// {received:true}, so the provider stops, and the stored call is rejected, with the provider's
// 404 as its reason, never applied. The tenant does not change.
func TestRoute3RecordsAnEventAboutAnObjectTheProviderDoesNotHaveAsRejectedAndAnswers200(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			p := e.ownPspxAccount(t)
			e.setUpCard(t, "4242 4242 4242 4242") // Berth creates the tenant's customer on the account
			list := e.sandboxCall(t, p.key, http.MethodGet, "/v1/events", url.Values{"type": {"checkout.session.completed"}})
			events, _ := list["data"].([]any)
			if len(events) == 0 {
				t.Fatalf("sandbox events: %v", list)
			}
			object := events[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
			customer, _ := object["customer"].(string)
			if !strings.HasPrefix(customer, "cus_") {
				t.Fatalf("the checkout's customer: %v", object["customer"])
			}
			before := e.otherTenant(t)

			eventID := "evt_" + stacktest.RandomHex(12)
			body := fmt.Sprintf(`{"id":%q,"object":"event","type":"invoice.paid","livemode":false,"created":%d,`+
				`"data":{"object":{"id":"in_%s","object":"invoice","customer":%q,"status":"paid"}}}`,
				eventID, time.Now().Unix(), stacktest.RandomHex(12), customer)
			for attempt := 1; attempt <= 2; attempt++ {
				status, out := e.postWebhook(t, "/api/v1/webhooks/pspx", "application/json",
					pspxSignature(e.other.Pspx.WebhookSecret, time.Now(), body), body)
				if status != http.StatusOK || out["received"] != true || len(out) != 1 {
					t.Fatalf("delivery %d: %d %v, want 200 {received:true}", attempt, status, out)
				}
			}
			var stored *webhookv1.Event
			for _, ev := range e.webhookEvents(t, &webhookv1.ListEventsRequest{ConnectionId: e.other.Pspx.ConnectionID, Outcome: "rejected"}) {
				if ev.GetProviderEventId() == eventID {
					stored = ev
				}
			}
			if stored == nil || stored.GetAttempts() != 2 || !strings.Contains(stored.GetLastError(), "404") || stored.GetAppliedAt() != "" {
				t.Fatalf("the stored call: %v", stored)
			}
			after := e.otherTenant(t)
			for _, field := range []string{"paidUntil", "pspxSubscriptionId", "paymentFailedCount", "units"} {
				if fmt.Sprint(after[field]) != fmt.Sprint(before[field]) {
					t.Errorf("%s changed: %v, then %v", field, before[field], after[field])
				}
			}
		})
	}
}
