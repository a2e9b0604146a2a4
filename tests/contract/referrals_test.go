package contract

import (
	"context"
	"net/url"
	"regexp"
	"testing"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestReferralReward(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			t.Run("a referred tenant's first payment gives the referrer's tenant the app's referral promotion", e.referralReward)
		})
	}
}

func (e *env) referralReward(t *testing.T) {
	ctx := context.Background()
	promo, err := e.admin.Billing.CreatePromotion(ctx, &billingv1.CreatePromotionRequest{AppId: e.demo.AppID, Code: "FRIENDS",
		Name: "Referral reward", FreeUnits: 7, FreeDays: 14})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Billing.UpdateAppSettings(ctx, &billingv1.UpdateAppSettingsRequest{AppId: e.demo.AppID, ReferralPromotionId: &promo.Id}); err != nil {
		t.Fatal(err)
	}
	referrer := e.tenant(t, e.demo.TenantID, e.read())
	if referrer["freeUnits"] != "0" || referrer["freeUntil"] != "" {
		t.Fatalf("referrer's tenant before: freeUnits %v freeUntil %v", referrer["freeUnits"], referrer["freeUntil"])
	}

	// Route 23 invites a friend; the friend signs up through the link and so gets a tenant of
	// their own.
	e.do("POST", "/v1/users/"+e.demo.UserIDs[0]+"/referral-invites", e.write(), `{"email":"friend@example.com","language":"en"}`).ok(t, 201)
	msgs := e.stack.Mailbox.Messages()
	link, err := url.Parse(regexp.MustCompile(`https?://\S+`).FindString(msgs[0].Text)) // newest first
	if err != nil || link.Query().Get("referral") == "" {
		t.Fatalf("invite link %v: %v", link, err)
	}
	tk := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code",
		"code": e.signUpReferred(t, "friend@example.com", "n", link.Query().Get("referral")), "redirect_uri": e.demo.RedirectURI, "nonce": "n"})
	friend := e.tenantOf(t, e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200).(map[string]any)["id"].(string))

	// The friend's tenant pays; the reward reaches the referrer's tenant through billing's
	// first-payment event.
	px := e.demo.Pspx
	_, payURL := e.createCheckout(t, e.write(), friend, e.demo.AppID, checkoutBody(px.Prices.OneTime, px.TaxRate, "payment", nil))
	if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
		t.Fatalf("status %s", got)
	}
	testkit.Eventually(t, "the referrer's tenant has the reward", func() bool {
		referrer = e.tenant(t, e.demo.TenantID, e.read())
		return referrer["freeUnits"] == "7"
	})
	if referrer["freeUntil"] == "" || referrer["pspxPaymentMethod"] != "berth_promo_code" {
		t.Fatalf("referrer's tenant after the reward: freeUntil %v paymentMethod %v", referrer["freeUntil"], referrer["pspxPaymentMethod"])
	}
	if paid := e.tenant(t, friend, e.read()); paid["freeUnits"] != "0" || paid["paidUnits"] != "1" {
		t.Fatalf("the friend's tenant: freeUnits %v paidUnits %v", paid["freeUnits"], paid["paidUnits"])
	}
	list := e.do("GET", "/v1/apps/"+e.demo.AppID+"/promotions", e.read(), "").ok(t, 200).(map[string]any)["items"].([]any)
	for _, item := range list {
		if p := item.(map[string]any); p["id"] == promo.Id && p["redemptions"] != float64(1) {
			t.Fatalf("the referral promotion counts %v redemptions, want 1", p["redemptions"])
		}
	}
}

// tenantOf names a user's tenant, as billing asks identity.
func (e *env) tenantOf(t *testing.T, userID string) string {
	t.Helper()
	conn, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, e.stack.TLS)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ref, err := identityv1.NewIdentityInternalServiceClient(conn).GetUserRef(context.Background(), &identityv1.GetUserRefRequest{AppId: e.demo.AppID, UserId: userID})
	if err != nil || ref.GetTenantRef() == "" {
		t.Fatalf("tenant of %s: %q, %v", userID, ref.GetTenantRef(), err)
	}
	return ref.GetTenantRef()
}
