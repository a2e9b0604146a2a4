package contract

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// promotionFields are the decided fields of a route-12 item, with their JSON types.
var promotionFields = map[string]string{
	"id": str, "code": str, "name": str, "description": str, "freeUnits": num, "freeDays": num,
	"validFrom": str, "validUntil": str, "maxRedemptions": num, "redemptions": num, "active": boo,
}

func TestPromotionRoutes(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			t.Run("route 12 lists the app's promotions to its read key", e.promotionList)
			t.Run("route 24 redeems once per tenant and route 5 shows it at once", e.promotionRedeem)
			t.Run("route 24 with a tenant token acts only for its own user", e.promotionRedeemWithToken)
			t.Run("route 24 lets one of two parallel redemptions of a last use win", e.promotionLastUse)
		})
	}
}

func (e *env) promotionList(t *testing.T) {
	path := "/v1/apps/" + e.demo.AppID + "/promotions"
	data := e.do("GET", path, e.read(), "").ok(t, 200).(map[string]any)
	assertShape(t, "promotion list", data, map[string]string{"kind": str, "itemsLength": num, "items": "array"})
	items := data["items"].([]any)
	if data["kind"] != "promotion" || len(items) != 1 || data["itemsLength"] != float64(1) {
		t.Fatalf("list = %v", data)
	}
	assertShape(t, "promotion item", items[0], promotionFields)
	if item := items[0].(map[string]any); item["code"] != e.demo.PromotionCode || item["active"] != true || item["freeDays"] != float64(30) {
		t.Fatalf("item = %v", item)
	}
	e.do("GET", path, e.write(), "").fails(t, 403)
	e.do("GET", path, nil, "").fails(t, 401)
	e.do("GET", "/v1/apps/"+e.other.AppID+"/promotions", e.read(), "").fails(t, 400)
	e.do("GET", "/v1/apps/not-a-uuid/promotions", e.read(), "").fails(t, 400)
}

func (e *env) promotionRedeem(t *testing.T) {
	user := e.demo.UserIDs[0]
	path := func(code string) string { return "/v1/users/" + user + "/promotion-codes/" + code }
	e.do("PUT", path(e.demo.PromotionCode), e.read(), "").fails(t, 403)
	e.do("PUT", path("NO-SUCH-CODE"), e.write(), "").fails(t, 400)

	if data := e.do("PUT", path(e.demo.PromotionCode), e.write(), "").ok(t, 200); data != nil {
		t.Fatalf("data = %v, want null", data)
	}
	tenant := e.do("GET", "/v1/tenants/"+e.demo.TenantID, e.read(), "").ok(t, 200).(map[string]any)
	if tenant["freeUnits"] != "5" || tenant["freeUntil"] == "" || tenant["pspxPaymentMethod"] != "berth_promo_code" {
		t.Fatalf("tenant after redemption: freeUnits %v freeUntil %v pspxPaymentMethod %v",
			tenant["freeUnits"], tenant["freeUntil"], tenant["pspxPaymentMethod"])
	}
	// Once per tenant: the second user of the same tenant cannot redeem it again.
	e.do("PUT", "/v1/users/"+e.demo.UserIDs[1]+"/promotion-codes/"+e.demo.PromotionCode, e.write(), "").fails(t, 400)
	e.do("PUT", path(e.demo.PromotionCode), e.write(), "").fails(t, 400)
	// Codes are matched whatever their case; another app's user is not found.
	e.do("PUT", "/v1/users/"+e.other.UserIDs[0]+"/promotion-codes/welcome30", e.write(), "").fails(t, 400)
	e.do("PUT", "/v1/users/"+e.other.UserIDs[0]+"/promotion-codes/welcome30",
		creds(e.other.WriteKey, "write", e.other.AppID), "").ok(t, 200)
	list := e.do("GET", "/v1/apps/"+e.demo.AppID+"/promotions", e.read(), "").ok(t, 200).(map[string]any)
	if got := list["items"].([]any)[0].(map[string]any)["redemptions"]; got != float64(1) {
		t.Fatalf("redemptions = %v, want 1", got)
	}
}

func (e *env) promotionRedeemWithToken(t *testing.T) {
	tk := e.newUser(t, "promo-"+stacktest.RandomHex(4)+"@example.com")
	me := e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200).(map[string]any)
	e.do("PUT", "/v1/users/"+e.demo.UserIDs[1]+"/promotion-codes/"+e.demo.PromotionCode, bearer(tk.access), "").fails(t, 403)
	e.do("PUT", "/v1/users/"+me["id"].(string)+"/promotion-codes/"+e.demo.PromotionCode, bearer(tk.access), "").ok(t, 200)
	tenant := e.do("GET", "/v1/tenants/me", bearer(tk.access), "").ok(t, 200).(map[string]any)
	if tenant["freeUnits"] != "5" {
		t.Fatalf("the token's tenant after redemption: freeUnits %v", tenant["freeUnits"])
	}
}

func (e *env) promotionLastUse(t *testing.T) {
	ctx := context.Background()
	if _, err := e.admin.Billing.CreatePromotion(ctx, &billingv1.CreatePromotionRequest{AppId: e.demo.AppID,
		Code: "LAST-ONE", Name: "Last one", FreeDays: 7, MaxRedemptions: 1}); err != nil {
		t.Fatal(err)
	}
	var users []string
	for range 2 {
		tk := e.newUser(t, "last-"+stacktest.RandomHex(4)+"@example.com")
		users = append(users, e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200).(map[string]any)["id"].(string))
	}
	var wg sync.WaitGroup
	statuses := make([]int, len(users))
	for i, u := range users {
		wg.Go(func() { statuses[i] = e.do("PUT", "/v1/users/"+u+"/promotion-codes/LAST-ONE", e.write(), "").status })
	}
	wg.Wait()
	if fmt.Sprint(statuses) != "[200 400]" && fmt.Sprint(statuses) != "[400 200]" {
		t.Fatalf("parallel redemptions of the last use answered %v, want one 200 and one 400", statuses)
	}
}
