package edge

import (
	"net/http"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const (
	mGetMe         = "/berth.identity.v1.IdentityService/GetMe"
	mExchangeToken = "/berth.identity.v1.TokenService/ExchangeToken"
	shopOrigin     = "https://shop.example"
)

func preflight(method, headers string) map[string]string {
	h := map[string]string{"Origin": shopOrigin, "Access-Control-Request-Method": method}
	if headers != "" {
		h["Access-Control-Request-Headers"] = headers
	}
	return h
}

func TestPreflightAllowsAnyOriginOnTokenAndPublicRoutes(t *testing.T) {
	for _, tc := range []struct{ name, path, method, headers string }{
		{"route 1 with a JSON body", "/api/v1/tokens", "POST", "content-type"},
		{"users/me with a token", "/v1/users/me", "GET", "authorization"},
		{"user update with both headers", "/v1/users/u1", "PUT", "Content-Type, Authorization"},
		{"user delete", "/v1/users/u1", "DELETE", "authorization"},
		{"tenant update", "/v1/tenants/t1", "PUT", "authorization,content-type"},
		{"no extra headers", "/api/v1/tokens", "POST", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			rec := h.do(t, http.MethodOptions, tc.path, "", preflight(tc.method, tc.headers))
			if rec.Code != http.StatusNoContent {
				t.Fatalf("status = %d, want 204; body %s", rec.Code, rec.Body.String())
			}
			for k, want := range map[string]string{
				"Access-Control-Allow-Origin":  shopOrigin,
				"Vary":                         "Origin",
				"Access-Control-Allow-Methods": "GET, POST, PUT, DELETE",
				"Access-Control-Allow-Headers": "Content-Type, Authorization",
				"Access-Control-Max-Age":       "600",
			} {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if got := rec.Header().Values("Access-Control-Allow-Credentials"); len(got) != 0 {
				t.Errorf("Access-Control-Allow-Credentials = %q, never wanted", got)
			}
			if rec.Body.Len() != 0 {
				t.Errorf("preflight body %q, want none", rec.Body.String())
			}
			if calls := len(h.identity.received()) + len(h.tenant.received()); calls != 0 {
				t.Errorf("a preflight reached a service (%d calls)", calls)
			}
		})
	}
}

func TestPreflightAllowsNothingForAPIKeysOrOtherHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, path, method, headers string
		status                      int
		v1                          bool // the answer's family
	}{
		{"API-key-only route (user read)", "/v1/users/u1", "GET", "", 403, true},
		{"API-key-only route (public key)", "/v1/apps/a1/public-keys", "GET", "", 403, true},
		{"API-key route under /api (sign-ins)", "/api/v1/analytics/sign-ins", "GET", "", 403, true},
		{"operator route", "/api/v1/internal/projects/p/apps/a/api-keys/k", "PUT", "authorization", 403, false},
		{"asks for X-API-KEY", "/v1/users/me", "GET", "authorization, x-api-key", 403, true},
		{"asks for X-API-KEY-TYPE", "/v1/users/u1", "PUT", "x-api-key-type", 403, true},
		{"asks for X-CLIENT-ID", "/api/v1/tokens", "POST", "content-type, x-client-id", 403, false},
		{"asks for a cookie-like header", "/api/v1/tokens", "POST", "x-requested-with", 403, false},
		{"unknown path", "/v1/nope", "GET", "", 404, true},
		{"method the path does not serve", "/api/v1/tokens", "PATCH", "", 405, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			rec := h.do(t, http.MethodOptions, tc.path, "", preflight(tc.method, tc.headers))
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.status, rec.Body.String())
			}
			for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Allow-Credentials", "Access-Control-Max-Age"} {
				if got := rec.Header().Get(k); got != "" {
					t.Errorf("%s = %q on a refused preflight", k, got)
				}
			}
			body := decode(t, rec)
			if _, isV1 := body["success"]; isV1 != tc.v1 {
				t.Errorf("body %s is not in the expected family (v1=%t)", rec.Body.String(), tc.v1)
			}
		})
	}
}

func TestOptionsWithoutPreflightHeadersIsAWrongMethod(t *testing.T) {
	h := newHarness(t)
	rec := h.do(t, http.MethodOptions, "/api/v1/tokens", "", nil)
	wantAPIFailure(t, rec, http.StatusMethodNotAllowed, "", "[E4000]", "Method Not Allowed")
	if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}
}

func TestActualResponseCarriesTheOriginOnlyWhenTheServiceAllowedIt(t *testing.T) {
	allow := metadata.Pairs(authn.MDAllowOrigin, shopOrigin)
	for _, tc := range []struct {
		name    string
		ans     answer
		origin  string
		allowed bool
	}{
		{"allowed success", answer{resp: &identityv1.User{}, header: allow}, shopOrigin, true},
		{"allowed error (a page may read why)", answer{err: wire(fault.Forbidden("frozen")), header: allow}, shopOrigin, true},
		{"service allowed nothing", answer{resp: &identityv1.User{}}, shopOrigin, false},
		{"service names another origin than the request's", answer{resp: &identityv1.User{}, header: allow}, "https://evil.example", false},
		{"no Origin on the request", answer{resp: &identityv1.User{}, header: allow}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.identity.program(mGetMe, tc.ans)
			headers := map[string]string{"Authorization": "Bearer tok"}
			if tc.origin != "" {
				headers["Origin"] = tc.origin
			}
			rec := h.do(t, http.MethodGet, "/v1/users/me", "", headers)
			got, vary := rec.Header().Get("Access-Control-Allow-Origin"), rec.Header().Get("Vary")
			if tc.allowed && (got != tc.origin || vary != "Origin") {
				t.Errorf("Access-Control-Allow-Origin = %q, Vary = %q; want %q, Origin", got, vary, tc.origin)
			}
			if !tc.allowed && (got != "" || vary != "") {
				t.Errorf("Access-Control-Allow-Origin = %q, Vary = %q; want neither", got, vary)
			}
			if c := rec.Header().Get("Access-Control-Allow-Credentials"); c != "" {
				t.Errorf("Access-Control-Allow-Credentials = %q, never wanted", c)
			}
			if k := rec.Header().Get(authn.MDAllowOrigin); k != "" {
				t.Errorf("the service's metadata leaked as a header: %q", k)
			}
		})
	}
}

func TestOriginReachesTheServiceAsMetadata(t *testing.T) {
	h := newHarness(t)
	h.identity.program(mExchangeToken, answer{resp: &identityv1.TokenList{}, header: metadata.Pairs(authn.MDAllowOrigin, shopOrigin)})
	rec := h.do(t, http.MethodPost, "/api/v1/tokens", `{"client_id":"app-1"}`, map[string]string{"Content-Type": "application/json", "Origin": shopOrigin})
	if rec.Code != http.StatusCreated {
		t.Fatalf("status = %d; body %s", rec.Code, rec.Body.String())
	}
	if got := h.identity.only(t).md.Get(authn.MDOrigin); len(got) != 1 || got[0] != shopOrigin {
		t.Errorf("origin metadata = %q, want [%s]", got, shopOrigin)
	}
	if got := rec.Header().Get("Access-Control-Allow-Origin"); got != shopOrigin {
		t.Errorf("Access-Control-Allow-Origin = %q on a 201, want %q", got, shopOrigin)
	}
}
