package contract

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	"github.com/berthhq/berth/services/sandbox/delivery"
)

// TestWebhookEffectsThroughSandboxDeliveries drives the money path as in production: the pspx
// sandbox signs and delivers its events to route 3, with its retries and faults.
func TestWebhookEffectsThroughSandboxDeliveries(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			p := e.hookedPspxAccount(t)
			t.Run("three failed renewals freeze the tenant, a paid one unfreezes it, an operator's freeze stays",
				func(t *testing.T) { e.dunning(t, p) })
			t.Run("an effect that fails answers 500 and the provider's retry applies it once",
				func(t *testing.T) { e.pspxEffectFailureRetried(t, p) })
			t.Run("a renewal draft's lines say the app's text before the provider finalizes it",
				func(t *testing.T) { e.renewalLinesDescribed(t, p) })
		})
	}
}

// hookedPspxAccount is ownPspxAccount with route 3 registered at the provider, as an operator
// sets it up: the sandbox's signed events reach Berth and change the tenant.
func (e *env) hookedPspxAccount(t *testing.T) pspxPlans {
	t.Helper()
	p := e.ownPspxAccount(t)
	endpoint := e.sandboxCreate(t, p.key, "/v1/webhook_endpoints", url.Values{
		"url": {e.stack.BaseURL + "/api/v1/webhooks/pspx"}, "enabled_events[]": seed.PspxWebhookEvents})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.admin.Billing.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{
		ConnectionId: e.other.Pspx.ConnectionID, TestWebhookSecret: endpoint["secret"].(string)}); err != nil {
		t.Fatal(err)
	}
	return p
}

// settle advances the sandbox clock by d and waits until every webhook delivery it caused was
// answered, so route 5 shows what the events did.
func (e *env) settle(t *testing.T, d time.Duration) {
	t.Helper()
	e.advanceClock(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.stack.Sandboxes.Deliveries.WaitIdle(ctx); err != nil {
		t.Fatalf("webhook deliveries: %v\n%+v", err, e.stack.Sandboxes.Deliveries.Deliveries())
	}
}

// failRenewal lets the subscription's period end and its renewal be declined three times, after
// which the provider gives up on the invoice.
func (e *env) failRenewal(t *testing.T) {
	t.Helper()
	e.settle(t, 32*24*time.Hour) // drafted, finalized after its hour, first attempt declined
	e.settle(t, 2*time.Hour)     // second attempt
	e.settle(t, 2*time.Hour)     // third: uncollectible
}

func (e *env) dunning(t *testing.T, p pspxPlans) {
	// Every delivery goes out three times at once, as providers sometimes do: each failure still
	// counts once.
	if err := e.stack.Sandboxes.Deliveries.SetFaults(delivery.Faults{Duplicate: 2}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stack.Sandboxes.Deliveries.ClearFaults)
	e.setUpCard(t, "4242 4242 4242 4242")
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(),
		jsonBody(map[string]any{"price": p.basic, "mode": "subscription", "quantity": 1, "test": true})).ok(t, 201)
	paid := e.otherTenant(t)
	if paid["pspxSubscriptionId"] == "" || paid["paidUntil"] == "" {
		t.Fatalf("subscribed tenant %v", paid)
	}
	// The payer's card is replaced by one the bank declines.
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherWrite(), "").ok(t, 200)
	e.setUpCard(t, "4000 0000 0000 0341")

	want := func(tn map[string]any, count float64, frozen, dueFailed bool) {
		t.Helper()
		if tn["paymentFailed"] != (count > 0) || tn["paymentFailedCount"] != count || tn["freezed"] != frozen ||
			tn["freezedDueFailedPayment"] != dueFailed || tn["paidUntil"] != paid["paidUntil"] || tn["pspxSubscriptionId"] != paid["pspxSubscriptionId"] {
			t.Fatalf("want %v failures, freezed %v, due to failed payments %v; tenant %v", count, frozen, dueFailed, tn)
		}
		if (count > 0) == (tn["paymentFailedDate"] == "") {
			t.Fatalf("paymentFailedDate %q after %v failures", tn["paymentFailedDate"], count)
		}
	}
	for n := 1; n <= 3; n++ {
		e.failRenewal(t)
		want(e.otherTenant(t), float64(n), n == 3, n == 3)
	}
	// A working card again: the next renewal is paid, access moves on, the freeze for failed
	// payments lifts.
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherWrite(), "").ok(t, 200)
	e.setUpCard(t, "4242 4242 4242 4242")
	e.settle(t, 32*24*time.Hour)
	renewed := e.otherTenant(t)
	if renewed["freezed"] != false || renewed["freezedDueFailedPayment"] != false || renewed["paymentFailed"] != false ||
		renewed["paymentFailedCount"] != 0.0 || renewed["paymentFailedDate"] != "" || renewed["paidUntil"].(string) <= paid["paidUntil"].(string) {
		t.Fatalf("after a paid renewal: %v", renewed)
	}

	// An operator's freeze outlasts a paid renewal; only the operator lifts it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	freeze := func(frozen bool) {
		t.Helper()
		if _, err := e.admin.Billing.SetTenantFrozen(ctx, &billingv1.SetTenantFrozenRequest{AppId: e.other.AppID, TenantId: e.other.TenantID, Frozen: frozen}); err != nil {
			t.Fatal(err)
		}
	}
	freeze(true)
	e.settle(t, 32*24*time.Hour)
	if tn := e.otherTenant(t); tn["freezed"] != true || tn["freezedDueFailedPayment"] != false || tn["paidUntil"].(string) <= renewed["paidUntil"].(string) {
		t.Fatalf("an operator's freeze after a paid renewal: %v", tn)
	}
	freeze(false)
	if tn := e.otherTenant(t); tn["freezed"] != false {
		t.Fatalf("after the operator's unfreeze: %v", tn)
	}
}

func (e *env) renewalLinesDescribed(t *testing.T, p pspxPlans) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	text := "Team plan × {quantity}, {start} to {end}"
	if _, err := e.admin.Billing.UpdateAppSettings(ctx, &billingv1.UpdateAppSettingsRequest{AppId: e.other.AppID, RenewalLineDescription: &text}); err != nil {
		t.Fatal(err)
	}
	sub := e.otherTenant(t)["pspxSubscriptionId"].(string)
	e.settle(t, 32*24*time.Hour)
	inv := e.sandboxCall(t, p.key, "GET", "/v1/invoices/"+e.sandboxCall(t, p.key, "GET", "/v1/subscriptions/"+sub, nil)["latest_invoice"].(string), nil)
	line := inv["lines"].(map[string]any)["data"].([]any)[0].(map[string]any)
	period := line["period"].(map[string]any)
	day := func(v any) string { return time.Unix(int64(v.(float64)), 0).UTC().Format(time.DateOnly) }
	want := fmt.Sprintf("Team plan × 1, %s to %s", day(period["start"]), day(period["end"]))
	if inv["billing_reason"] != "subscription_cycle" || inv["status"] != "paid" || line["description"] != want {
		t.Fatalf("renewal invoice %v %v, line %q, want %q", inv["billing_reason"], inv["status"], line["description"], want)
	}
}
