package contract

import (
	"net/url"
	"testing"
	"time"

	"github.com/berthhq/berth/services/sandbox/delivery"
)

// TestSepaSubscriptionsSettleThroughTheProvidersEvents: a SEPA debit is still processing when the
// payer comes back, so the return page can only say pending; the provider's
// checkout.session.async_payment_succeeded or _failed, delivered to route 3 when the bank
// answers, decides.
func TestSepaSubscriptionsSettleThroughTheProvidersEvents(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			// Each delivery goes out three times at once.
			if err := e.stack.Sandboxes.Deliveries.SetFaults(delivery.Faults{Duplicate: 2}); err != nil {
				t.Fatal(err)
			}
			p := e.hookedPspxAccount(t)
			subscribe := func(t *testing.T, iban string) {
				t.Helper()
				_, payURL := e.createCheckout(t, e.otherWrite(), e.other.TenantID, e.other.AppID,
					checkoutBody(p.basic, p.tax, "subscription", map[string]any{"paymentMethodType": "sepa"}))
				if status := e.pay(t, payURL, sepa(iban)).Query().Get("status"); status != "pending" {
					t.Fatalf("return status %q, want pending", status)
				}
				if tn := e.otherTenant(t); tn["pspxSubscriptionId"] != "" {
					t.Fatalf("subscribed before the bank answered: %v", tn["pspxSubscriptionId"])
				}
				e.settle(t, time.Minute) // the bank answers at the next clock advance
			}
			t.Run("a debit the bank refuses subscribes nothing and counts no failed renewal", func(t *testing.T) {
				subscribe(t, "DE62370400440532013001")
				if tn := e.otherTenant(t); tn["pspxSubscriptionId"] != "" || tn["mode"] != "" || tn["paymentFailed"] != false || tn["paidUntil"] != "" {
					t.Fatalf("after a refused debit: %v", tn)
				}
			})
			t.Run("a debit the bank pays subscribes the tenant", func(t *testing.T) {
				subscribe(t, "DE89370400440532013000")
				tn := e.otherTenant(t)
				if tn["pspxSubscriptionId"] == "" || tn["mode"] != "subscription" || tn["pspxPaymentMethod"] != "sepa" || tn["paidUntil"] == "" {
					t.Fatalf("after a paid debit: %v", tn)
				}
				e.wantMoneyEvents(t, e.other.TenantID, map[string]int{"billing.subscription.started": 1})
			})
		})
	}
}

func sepa(iban string) url.Values {
	return url.Values{"iban": {iban}, "name": {"Ada Lovelace"}, "email": {"ada@example.com"},
		"shipping_name": {"Ada Lovelace"}, "shipping_line1": {"1 Harbour Street"}, "shipping_postal_code": {"20457"},
		"shipping_city": {"Hamburg"}, "shipping_country": {"DE"}}
}
