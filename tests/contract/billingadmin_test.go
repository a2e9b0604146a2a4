package contract

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/cmd/berth/stacktest"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// TestOperatorsSeeAPromotionsRedemptionsAndATenantsMoney is what the console's billing and tenant
// pages show, through the running stack: a promotion created over gRPC and redeemed with route 24
// appears in its redemptions and in the tenant's billing with its free units; the tenant's setup
// checkout, its route-13 charge and the provider's invoice appear beside them; and no answer
// carries a provider secret.
func TestOperatorsSeeAPromotionsRedemptionsAndATenantsMoney(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			ctx := context.Background()
			admin := e.admin.Billing
			var answers []proto.Message
			keep := func(m proto.Message, err error) proto.Message {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				answers = append(answers, m)
				return m
			}
			// Known secrets beside the demo's own, so the answers can be searched for them.
			liveKey, liveHook := "sk_live_"+stacktest.RandomHex(16), "whsec_"+stacktest.RandomHex(16)
			keep(admin.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{ConnectionId: e.demo.Pspx.ConnectionID,
				LiveSecretKey: liveKey, LiveWebhookSecret: liveHook}))

			promo := keep(admin.CreatePromotion(ctx, &billingv1.CreatePromotionRequest{AppId: e.demo.AppID, Code: "CONSOLE-GIFT",
				Name: "Console gift", FreeUnits: 6, MaxRedemptions: 10})).(*billingv1.Promotion)
			user := e.demo.UserIDs[0]
			e.do("PUT", "/v1/users/"+user+"/promotion-codes/console-gift", e.write(), "").ok(t, 200)

			page := keep(admin.ListPromotionRedemptions(ctx, &billingv1.ListPromotionRedemptionsRequest{AppId: e.demo.AppID,
				PromotionId: promo.GetId()})).(*billingv1.PromotionRedemptionPage)
			if len(page.GetItems()) != 1 || page.GetNextCursor() != "" {
				t.Fatalf("redemptions %v", page)
			}
			if r := page.GetItems()[0]; r.GetKind() != "redemption" || r.GetTenantId() != e.demo.TenantID || r.GetUserId() != user ||
				r.GetFreeUnits() != 6 || r.GetCode() != "CONSOLE-GIFT" || r.GetAt() == "" {
				t.Fatalf("redemption %v", r)
			}
			if _, err := admin.UpdatePromotionLimits(ctx, &billingv1.UpdatePromotionLimitsRequest{AppId: e.demo.AppID, PromotionId: promo.GetId(),
				MaxRedemptions: proto.Int32(0)}); err != nil {
				t.Fatalf("unlimited: %v", err)
			}
			// The tenant's money: a card set up with a checkout, then two units invoiced on it (route 13).
			_, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody("", "", "setup", map[string]any{"price": nil, "taxRate": nil}))
			if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
				t.Fatalf("setup status %s", got)
			}
			e.do("POST", "/v1/tenants/"+e.demo.TenantID+"/pspx-invoices", e.write(), jsonBody(map[string]any{"price": e.demo.Pspx.Prices.OneTime,
				"mode": "payment", "quantity": 2, "userId": user, "test": true})).ok(t, 201)

			b := keep(admin.GetTenantBilling(ctx, &billingv1.GetTenantBillingRequest{AppId: e.demo.AppID, TenantId: e.demo.TenantID,
				Test: true})).(*billingv1.TenantBilling)
			if st := b.GetState(); st.GetFreeUnits() != "6" || st.GetPaidUnits() != "2" || b.GetFrozenReason() != "" || b.GetRevision() < 3 {
				t.Fatalf("tenant billing state %v, frozen %q, revision %d", st, b.GetFrozenReason(), b.GetRevision())
			}
			if len(b.GetRedemptions()) != 1 || b.GetRedemptions()[0].GetPromotionId() != promo.GetId() {
				t.Fatalf("tenant's grants %v", b.GetRedemptions())
			}
			if p := b.GetPayments(); len(p) != 2 || p[0].GetSource() != "charge" || p[0].GetKind() != "invoice" || p[0].GetStatus() != "completed" ||
				p[1].GetSource() != "checkout" || p[1].GetKind() != "setup" || p[1].GetStatus() != "completed" {
				t.Fatalf("tenant's payments, newest first: %v", p)
			}
			inv := b.GetInvoices()
			if inv.GetKind() != "pspxInvoices" || inv.GetItemsLength() < 1 || int(inv.GetItemsLength()) != len(inv.GetItems()) ||
				inv.GetItems()[0].GetFields()["object"].GetStringValue() != "invoice" {
				t.Fatalf("tenant's invoices %v", inv)
			}
			// The operator's freeze shows with its reason.
			if _, err := admin.SetTenantFrozen(ctx, &billingv1.SetTenantFrozenRequest{AppId: e.demo.AppID, TenantId: e.demo.TenantID, Frozen: true}); err != nil {
				t.Fatal(err)
			}
			frozen := keep(admin.GetTenantBilling(ctx, &billingv1.GetTenantBillingRequest{AppId: e.demo.AppID, TenantId: e.demo.TenantID})).(*billingv1.TenantBilling)
			if !frozen.GetState().GetFreezed() || frozen.GetFrozenReason() != "operator" || len(frozen.GetInvoices().GetItems()) != 0 {
				t.Fatalf("frozen tenant %v (live mode: the tenant never paid live)", frozen)
			}

			keep(admin.GetAppBilling(ctx, &billingv1.GetAppBillingRequest{AppId: e.demo.AppID}))
			keep(admin.ListAppPromotions(ctx, &billingv1.ListPromotionsRequest{AppId: e.demo.AppID}))
			keep(admin.ListCatalog(ctx, &billingv1.ListCatalogRequest{AppId: e.demo.AppID}))
			for _, m := range answers {
				raw, err := protojson.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range []string{liveKey, liveHook, e.demo.Pspx.WebhookSecret, "sk_test_", "sk_live_", "whsec_"} {
					if strings.Contains(string(raw), secret) {
						t.Fatalf("%T carries a secret (%.12s…): %s", m, secret, raw)
					}
				}
			}

			// Another app names neither this tenant nor this promotion.
			if _, err := admin.GetTenantBilling(ctx, &billingv1.GetTenantBillingRequest{AppId: e.other.AppID, TenantId: e.demo.TenantID}); status.Code(err) != codes.NotFound {
				t.Fatalf("another app's view of the tenant: %v", err)
			}
			if _, err := admin.ListPromotionRedemptions(ctx, &billingv1.ListPromotionRedemptionsRequest{AppId: e.other.AppID, PromotionId: promo.GetId()}); status.Code(err) != codes.NotFound {
				t.Fatalf("another app's view of the promotion's redemptions: %v", err)
			}
			if _, err := admin.UpdatePromotionLimits(ctx, &billingv1.UpdatePromotionLimitsRequest{AppId: e.demo.AppID, PromotionId: promo.GetId(),
				MaxRedemptions: proto.Int32(-3)}); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("a negative maximum: %v", err)
			}
		})
	}
}
