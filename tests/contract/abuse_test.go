package contract

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// scopeOf is the scope claim of a JWT, as JSON.
func scopeOf(t *testing.T, jwt string) string {
	t.Helper()
	raw, err := base64.RawStdEncoding.DecodeString(strings.Split(jwt, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	scope, _ := json.Marshal(claims["scope"])
	return string(scope)
}

// tokenItem posts to route 1 and returns the response with its first item.
func (e *env) tokenItem(t *testing.T, body map[string]string) (response, map[string]any) {
	t.Helper()
	r := e.do("POST", "/api/v1/tokens", nil, mustJSON(body))
	if r.status != 201 {
		t.Fatalf("token exchange: %d %s", r.status, r.raw)
	}
	return r, r.body.(map[string]any)["items"].([]any)[0].(map[string]any)
}

// Route 1: the sign-up granted "openid profile email". An exchange asking for more gets the
// intersection, a refresh can not widen it and answers the redirect URI stored with the token
// family whatever it sends, and every token answer (failures too) is Cache-Control: no-store.
func TestTokenScopeRedirectAndCaching(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			code := e.signUp(t, "scoped@example.com", "nonce-1")
			r, item := e.tokenItem(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": code,
				"redirect_uri": e.demo.RedirectURI, "nonce": "nonce-1", "scope": "email admin openid"})
			if got := scopeOf(t, item["accessToken"].(string)); got != `["openid","email"]` {
				t.Errorf("exchange scope = %s, want the intersection with the grant", got)
			}
			if got := r.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("exchange Cache-Control = %q, want no-store", got)
			}
			r, item = e.tokenItem(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token",
				"refresh_token": item["refreshToken"].(string), "scope": "openid profile email admin billing",
				"redirect_uri": "https://attacker.example/cb"})
			if got := scopeOf(t, item["accessToken"].(string)); got != `["openid","profile","email"]` {
				t.Errorf("refresh scope = %s, want at most the grant", got)
			}
			if item["redirectUri"] != strings.TrimSuffix(e.demo.RedirectURI, "/") {
				t.Errorf("refresh redirectUri = %v, want the stored %s", item["redirectUri"], e.demo.RedirectURI)
			}
			if got := r.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("refresh Cache-Control = %q, want no-store", got)
			}
			failed := e.do("POST", "/api/v1/tokens", nil, mustJSON(map[string]string{"client_id": e.demo.AppID, "refresh_token": "spent"}))
			e.apiFails(t, failed, 400, "[E4000]")
			if got := failed.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("failed exchange Cache-Control = %q, want no-store", got)
			}
		})
	}
}

// Route 17: with a tenant access token each of the app-server fields is 403 and nothing of the
// patch applies; the write key sets them.
func TestTenantServerFieldsNeedTheWriteKey(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			tk := e.newUser(t, "owner@example.com")
			tenantID := e.do("GET", "/v1/tenants/me", bearer(tk.access), "").ok(t, 200).(map[string]any)["id"].(string)
			before := e.do("GET", "/v1/tenants/"+tenantID, e.read(), "").ok(t, 200).(map[string]any)
			for _, field := range []string{`"pspxOneTimePaymentValidThru":"2030-01-01"`, `"isInvoicePending":true`, `"companyTaxExempt":"exempt"`} {
				e.do("PUT", "/v1/tenants/"+tenantID, bearer(tk.access), `{"kind":"tenant","name":"Changed",`+field+`}`).fails(t, 403)
				e.do("PUT", "/v1/tenants/"+tenantID, bearer(tk.access), `{"tenant":{"name":"Changed",`+field+`}}`).fails(t, 403)
			}
			after := e.do("GET", "/v1/tenants/"+tenantID, e.read(), "").ok(t, 200).(map[string]any)
			for _, k := range []string{"name", "pspxOneTimePaymentValidThru", "isInvoicePending", "companyTaxExempt"} {
				if fmt.Sprint(after[k]) != fmt.Sprint(before[k]) {
					t.Errorf("%s changed by a refused patch: %v -> %v", k, before[k], after[k])
				}
			}
			e.do("PUT", "/v1/tenants/"+tenantID, e.write(), `{"kind":"tenant","isInvoicePending":true,"companyTaxExempt":"exempt"}`).ok(t, 200)
			got := e.do("GET", "/v1/tenants/"+tenantID, e.read(), "").ok(t, 200).(map[string]any)
			if got["isInvoicePending"] != true || got["companyTaxExempt"] != "exempt" {
				t.Errorf("write key patch not applied: %v", got)
			}
		})
	}
}

// Route 18: a user's own token changes its email at most 5 times a day; the sixth change is 400
// with Retry-After.
func TestEmailChangesPerUserAreLimited(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			tk := e.newUser(t, "mover@example.com")
			userID := e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200).(map[string]any)["id"].(string)
			for i := range 5 {
				e.do("PUT", "/v1/users/"+userID, bearer(tk.access), fmt.Sprintf(`{"user":{"email":"mover%d@example.com"}}`, i)).ok(t, 200)
			}
			r := e.do("PUT", "/v1/users/"+userID, bearer(tk.access), `{"user":{"email":"probe@example.com"}}`)
			r.fails(t, 400)
			if r.header.Get("Retry-After") == "" {
				t.Error("the limited change has no Retry-After")
			}
			e.do("PUT", "/v1/users/"+userID, bearer(tk.access), `{"user":{"nickname":"still fine"}}`).ok(t, 200)
		})
	}
}

// Sign-in limits hold under parallel guesses end to end: 24 wrong passwords at once from one
// address check exactly 10 passwords; the rest are refused as over the limit.
func TestParallelSignInGuessesStopAtTheLimit(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			e.signUp(t, "target@example.com", "n")
			conn, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, e.stack.TLS)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			client := identityv1.NewLoginServiceClient(conn)
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				answers = map[codes.Code]int{}
			)
			for range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := client.SignIn(context.Background(), &identityv1.SignInRequest{
						Params: &identityv1.LoginParams{ClientId: e.demo.AppID, RedirectUri: e.demo.RedirectURI, State: strings.Repeat("s", 64)},
						Email:  "target@example.com", Password: "wrong password!", ClientIp: "198.51.100.20",
					})
					mu.Lock()
					answers[status.Code(err)]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			if answers[codes.InvalidArgument] != 10 || answers[codes.ResourceExhausted] != 14 {
				t.Fatalf("answers = %v, want 10 wrong-password and 14 over-the-limit", answers)
			}
		})
	}
}
