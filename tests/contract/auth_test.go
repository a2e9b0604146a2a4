package contract

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// signUp creates an end user through the identity LoginService (what the hosted page calls) and
// returns the authorization code of the redirect.
func (e *env) signUp(t *testing.T, email, nonce string) (code string) {
	t.Helper()
	return e.signUpReferred(t, email, nonce, "")
}

// signUpReferred is signUp through an invite link carrying referral.
func (e *env) signUpReferred(t *testing.T, email, nonce, referral string) (code string) {
	t.Helper()
	conn, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, e.stack.TLS)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := identityv1.NewLoginServiceClient(conn).SignUp(context.Background(), &identityv1.SignUpRequest{
		Params:   &identityv1.LoginParams{ClientId: e.demo.AppID, RedirectUri: e.demo.RedirectURI, State: strings.Repeat("s", 64), Nonce: nonce, Scope: "openid profile email", Referral: referral},
		Email:    email,
		Password: "correct horse battery staple",
		ClientIp: "127.0.0.1",
	})
	if err != nil {
		t.Fatalf("sign up: %v", err)
	}
	u, err := url.Parse(res.GetUrl())
	if err != nil || u.Query().Get("code") == "" || u.Query().Get("service") != "email" || u.Query().Get("client_id") != e.demo.AppID {
		t.Fatalf("redirect = %q", res.GetUrl())
	}
	return u.Query().Get("code")
}

type tokens struct{ access, id, refresh, expiresIn string }

// newUser signs a new end user of the demo app up through the hosted page and exchanges the code:
// the tokens a browser holds after sign-up.
func (e *env) newUser(t *testing.T, email string) tokens {
	t.Helper()
	return e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code",
		"code": e.signUp(t, email, "n"), "redirect_uri": e.demo.RedirectURI, "nonce": "n"})
}

// exchange calls route 1 and checks the tokens collection envelope.
func (e *env) exchange(t *testing.T, body map[string]string) tokens {
	t.Helper()
	raw, _ := json.Marshal(body)
	r := e.do("POST", "/api/v1/tokens", nil, string(raw))
	if r.status != 201 {
		t.Fatalf("token exchange: %d %s", r.status, r.raw)
	}
	assertShape(t, "tokens envelope", r.body, map[string]string{"kind": str, "totalItems": num, "itemsLength": num, "items": arr})
	m := r.body.(map[string]any)
	items := m["items"].([]any)
	if m["kind"] != "tokens" || m["totalItems"] != float64(1) || m["itemsLength"] != float64(1) || len(items) != 1 {
		t.Fatalf("tokens envelope = %v", m)
	}
	assertShape(t, "token item", items[0], map[string]string{"accessToken": str, "idToken": str, "expiresIn": str, "tokenType": str, "redirectUri": str, "refreshToken": str})
	it := items[0].(map[string]any)
	if it["tokenType"] != "Bearer" || it["redirectUri"] != strings.TrimSuffix(body["redirect_uri"], "/") {
		t.Fatalf("token item = %v", it)
	}
	return tokens{access: it["accessToken"].(string), id: it["idToken"].(string), refresh: it["refreshToken"].(string), expiresIn: it["expiresIn"].(string)}
}

func (e *env) apiFails(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	errs, _ := r.body.(map[string]any)["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("want one error item: %s", r.raw)
	}
	assertShape(t, "/api/v1 error", errs[0], apiErrorFields)
	if errs[0].(map[string]any)["code"] != code {
		t.Fatalf("code = %v, want %s", errs[0], code)
	}
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestSignInTokensAndTenantAccessTokens(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			code := e.signUp(t, "new.user@example.com", "nonce-1")
			exchange := map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": code,
				"redirect_uri": e.demo.RedirectURI + "/", "nonce": "nonce-1", "state": strings.Repeat("s", 64), "service": "email"}
			tk := e.exchange(t, exchange)
			if tk.access == "" || tk.refresh == "" || tk.expiresIn == "" {
				t.Fatalf("tokens = %+v", tk)
			}
			e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, mustJSON(exchange)), 400, "[E4000]") // code is single use
			e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, `{"client_id":"`+e.demo.AppID+`","grant_type":"authorization_code","code":"nope","redirect_uri":"`+e.demo.RedirectURI+`"}`), 400, "[E4000]")
			e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, `{`), 400, "[E4000]")

			me := e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200)
			assertShape(t, "me", me, userFields)
			userID := me.(map[string]any)["id"].(string)
			if me.(map[string]any)["email"] != "new.user@example.com" || me.(map[string]any)["tenantId"] != true {
				t.Fatalf("me = %v", me)
			}
			myTenant := e.do("GET", "/v1/tenants/me", bearer(tk.access), "").ok(t, 200)
			assertShape(t, "my tenant", myTenant, tenantFields)
			tenantID := myTenant.(map[string]any)["id"].(string)
			if users := myTenant.(map[string]any)["users"].([]any); len(users) != 1 {
				t.Fatalf("sign-up tenant has %d users, want 1", len(users))
			}

			// A tenant access token works on its own user and tenant only, and never on API-key-only routes.
			e.do("PUT", "/v1/users/"+userID, bearer(tk.access), `{"user":{"nickname":"newbie"}}`).ok(t, 200)
			e.do("PUT", "/v1/users/"+e.demo.UserIDs[0], bearer(tk.access), `{"user":{"nickname":"x"}}`).fails(t, 403)
			e.do("PUT", "/v1/tenants/"+tenantID, bearer(tk.access), `{"kind":"tenant","name":"Mine"}`).ok(t, 200)
			e.do("PUT", "/v1/tenants/"+e.demo.TenantID, bearer(tk.access), `{"kind":"tenant","name":"Theirs"}`).fails(t, 403)
			e.do("GET", "/v1/apps/"+e.demo.AppID+"/user-roles", bearer(tk.access), "").ok(t, 200)
			e.do("GET", "/v1/apps/"+e.other.AppID+"/user-roles", bearer(tk.access), "").fails(t, 403)
			e.do("GET", "/v1/tenants/"+tenantID, bearer(tk.access), "").fails(t, 401)
			e.do("GET", "/v1/users/"+userID, bearer(tk.access), "").fails(t, 401)
			e.do("GET", "/v1/users/me", bearer(tk.id), "").fails(t, 401) // an ID token is not an access token

			// Refresh rotates; reusing a rotated token revokes the family.
			refreshed := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "refresh_token": tk.refresh,
				"redirect_uri": e.demo.RedirectURI, "nonce": "nonce-2", "prompt": "none"})
			if refreshed.refresh == tk.refresh || refreshed.access == tk.access {
				t.Fatal("refresh did not rotate the tokens")
			}
			e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, mustJSON(map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token", "refresh_token": tk.refresh})), 400, "[E4000]")
			e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, mustJSON(map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token", "refresh_token": refreshed.refresh})), 400, "[E4000]")

			// The sign-in shows up in analytics (route 8 and its /v1 alias), once.
			today := time.Now().UTC().Format(time.DateOnly)
			for _, path := range []string{"/api/v1/analytics/sign-ins", "/v1/analytics/sign-ins"} {
				var items []any
				testkit.Eventually(t, path+" lists the sign-in", func() bool {
					data := e.do("GET", path+"?from="+today+"&to="+today, e.read(), "").ok(t, 200).(map[string]any)
					items = data["items"].([]any)
					return len(items) > 0
				})
				if len(items) != 1 {
					t.Fatalf("%s: %d sign-ins, want 1", path, len(items))
				}
				assertShape(t, "sign-in item", items[0], map[string]string{"id": str, "lastSignInAt": str, "daysSinceLastSignIn": str, "newsletterMemberId": str, "user": obj})
				if u := items[0].(map[string]any)["user"].(map[string]any); u["id"] != userID {
					t.Fatalf("sign-in of %v", u["id"])
				}
			}
			e.do("GET", "/api/v1/analytics/sign-ins?from="+today, e.read(), "").fails(t, 400)
			e.do("GET", "/api/v1/analytics/sign-ins?from=2026-02-30&to=2026-03-01", e.read(), "").fails(t, 400)
			e.do("GET", "/api/v1/analytics/sign-ins?from="+today+"&to="+today, e.write(), "").fails(t, 403)

			// Freezing stops the user's token at once in identity and, after the event, everywhere.
			e.do("PUT", "/v1/apps/"+e.demo.AppID+"/users/"+userID+"/access-status/0", e.write(), "").ok(t, 200)
			e.do("GET", "/v1/users/me", bearer(refreshed.access), "").fails(t, 403)
			testkit.Eventually(t, "the tenant service refuses the frozen user's token", func() bool {
				return e.do("GET", "/v1/tenants/me", bearer(refreshed.access), "").status == 403
			})
			e.do("PUT", "/v1/apps/"+e.demo.AppID+"/users/"+userID+"/access-status/1", e.write(), "").ok(t, 200)

			// Deleting the tenant's only user deletes the tenant.
			e.do("DELETE", "/v1/users/"+userID, e.write(), "").ok(t, 200)
			e.do("DELETE", "/v1/users/"+userID, e.write(), "").fails(t, 400)
			testkit.Eventually(t, "the tenant of the deleted only user is deleted", func() bool {
				r := e.do("GET", "/v1/tenants/"+tenantID, e.read(), "")
				return r.status == 200 && r.body.(map[string]any)["data"].(map[string]any)["deleted"] == true
			})
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
