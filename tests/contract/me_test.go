package contract

import (
	"strings"
	"testing"
)

// The REST wrapper names the caller's own user and tenant `me` on the routes it calls with a
// tenant access token; with an API key `me` names nobody and is bad input in the route's envelope.
func TestMeIsTheTokensOwnUserAndTenantOnEveryTokenRoute(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			tk := e.newUser(t, "me.user@example.com")
			own := bearer(tk.access)
			userID := e.do("GET", "/v1/users/me", own, "").ok(t, 200).(map[string]any)["id"].(string)

			// Route 18 (PUT and its POST alias) and route 17 change the caller's own records.
			e.do("PUT", "/v1/users/me", own, `{"user":{"nickname":"myself"}}`).ok(t, 200)
			e.do("POST", "/v1/users/Me", own, `{"user":{"salutation":"Ms"}}`).ok(t, 200)
			if u := e.do("GET", "/v1/users/me", own, "").ok(t, 200).(map[string]any); u["nickname"] != "myself" || u["salutation"] != "Ms" {
				t.Fatalf("route 18 with me did not change the token's user: %v", u)
			}
			e.do("PUT", "/v1/tenants/me", own, `{"kind":"tenant","name":"My own"}`).ok(t, 200)
			if tn := e.do("GET", "/v1/tenants/me", own, "").ok(t, 200).(map[string]any); tn["name"] != "My own" {
				t.Fatalf("route 17 with me did not change the token's tenant: %v", tn)
			}

			// Route 23 and 24 on the user, the billing routes on the tenant: answered for the
			// token's own records (the billing routes then find no subscription or customer, 400),
			// never refused as another user's or tenant's (403).
			e.do("POST", "/v1/users/me/referral-invites", own, `{"email":"friend@example.com","language":"en"}`).ok(t, 201)
			e.do("PUT", "/v1/users/me/promotion-codes/"+e.demo.PromotionCode, own, "").ok(t, 200)
			for _, c := range []struct{ method, path, body string }{
				{"PUT", "/v1/tenants/me/pspx-subscriptions", `{"price":"price_nope"}`},
				{"DELETE", "/v1/tenants/me/pspx-subscriptions?userId=" + userID, ""},
				{"DELETE", "/v1/tenants/me/pspx-payment-methods?userId=" + userID, ""},
				{"GET", "/v1/tenants/me/pspx-invoices?userId=" + userID, ""},
			} {
				r := e.do(c.method, c.path, own, c.body)
				if r.status == 403 || strings.Contains(r.raw, "not valid for this") {
					t.Fatalf("%s %s with the token's own me refused: %d %s", c.method, c.path, r.status, r.raw)
				}
				// Routes 20–22 name a user of the tenant too: userId=me is the token's user.
				if byMe, ok := strings.CutSuffix(c.path, "userId="+userID); ok {
					if m := e.do(c.method, byMe+"userId=me", own, c.body); m.status != r.status || m.raw != r.raw {
						t.Fatalf("%s %s: userId=me answered %d %s, the user's id %d %s", c.method, byMe, m.status, m.raw, r.status, r.raw)
					}
				}
			}

			// An API key has no user or tenant of its own: 400 naming the field.
			for _, c := range []struct{ method, path, body, field string }{
				{"GET", "/v1/users/me", "", "userId"},
				{"GET", "/v1/tenants/me", "", "tenantId"},
				{"PUT", "/v1/users/me", `{"user":{"nickname":"x"}}`, "userId"},
				{"POST", "/v1/users/me/referral-invites", `{"email":"friend@example.com","language":"en"}`, "userId"},
				{"PUT", "/v1/tenants/me", `{"kind":"tenant","name":"x"}`, "tenantId"},
				{"PUT", "/v1/tenants/me/pspx-subscriptions", `{"price":"price_nope"}`, "tenantId"},
			} {
				r := e.do(c.method, c.path, e.write(), c.body)
				r.fails(t, 400)
				if msg := r.body.(map[string]any)["error"].(string); !strings.Contains(msg, c.field) || !strings.Contains(msg, `"me"`) {
					t.Fatalf("%s %s with an API key: error %q does not name %s and me", c.method, c.path, msg, c.field)
				}
			}

			// Deleting me deletes the token's user.
			e.do("DELETE", "/v1/users/me", own, "").ok(t, 200)
			if u := e.do("GET", "/v1/users/"+userID, e.read(), "").ok(t, 200).(map[string]any); u["deleted"] != true {
				t.Fatalf("the token's user survived DELETE /v1/users/me: %v", u)
			}
		})
	}
}
