package contract

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/testkit"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// preflight sends a browser's CORS preflight and returns its status and headers (no body).
func (e *env) preflight(t *testing.T, path, origin, method, headers string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, e.stack.BaseURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header
}

func withOrigin(h map[string]string, origin string) map[string]string {
	out := map[string]string{"Origin": origin}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// allows reports whether r lets a page on origin read it, failing on a half-made CORS answer.
func allows(t *testing.T, r response, origin string) bool {
	t.Helper()
	acao, vary := r.header.Get("Access-Control-Allow-Origin"), r.header.Get("Vary")
	if r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("Access-Control-Allow-Credentials sent")
	}
	switch {
	case acao == "" && vary == "":
		return false
	case acao == origin && vary == "Origin":
		return true
	}
	t.Fatalf("Access-Control-Allow-Origin %q, Vary %q for origin %q", acao, vary, origin)
	return false
}

func TestBrowsersReadAnswersOnlyFromTheirAppsOrigins(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			const (
				appOrigin   = "http://localhost:3000" // the demo app's redirect URI's origin
				otherApp    = "http://localhost:4000" // the second app's
				foreign     = "https://evil.example"
				extraOrigin = "https://shop.example"
			)

			// Preflights allow any origin on token and public routes, nothing for API keys.
			for _, o := range []string{appOrigin, foreign} {
				if code, h := e.preflight(t, "/api/v1/tokens", o, "POST", "content-type"); code != 204 || h.Get("Access-Control-Allow-Origin") != o ||
					h.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization" || h.Get("Access-Control-Allow-Methods") != "GET, POST, PUT, DELETE" {
					t.Fatalf("preflight of route 1 from %s: %d %v", o, code, h)
				}
			}
			if code, h := e.preflight(t, "/v1/users/me", appOrigin, "GET", "authorization"); code != 204 || h.Get("Access-Control-Allow-Origin") != appOrigin {
				t.Fatalf("preflight of /v1/users/me: %d %v", code, h)
			}
			// Refused preflights allow nothing: a preflight that is not 2xx fails in the browser,
			// which never sends the request (the refusal, an error answer, may name the origin).
			if code, h := e.preflight(t, "/v1/users/me", appOrigin, "GET", "authorization, x-api-key"); code != 403 || h.Get("Access-Control-Allow-Headers") != "" || h.Get("Access-Control-Allow-Methods") != "" {
				t.Fatalf("preflight asking for X-API-KEY: %d %v", code, h)
			}
			if code, h := e.preflight(t, "/v1/tenants/"+e.demo.TenantID, foreign, "GET", ""); code != 403 || h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Allow-Headers") != "" {
				t.Fatalf("preflight of an API-key-only route: %d %v", code, h)
			}

			// Route 1: the client_id's origins only, on success and on failure.
			code := e.signUp(t, "cors.user@example.com", "nonce-c")
			exchange := mustJSON(map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": code,
				"redirect_uri": e.demo.RedirectURI, "nonce": "nonce-c"})
			r := e.do("POST", "/api/v1/tokens", map[string]string{"Origin": appOrigin}, exchange)
			if r.status != 201 || !allows(t, r, appOrigin) {
				t.Fatalf("exchange from the app's origin: %d %v", r.status, r.header)
			}
			access := r.body.(map[string]any)["items"].([]any)[0].(map[string]any)["accessToken"].(string)
			spent := e.do("POST", "/api/v1/tokens", map[string]string{"Origin": appOrigin}, exchange)
			if spent.status != 400 || !allows(t, spent, appOrigin) {
				t.Fatalf("a refused exchange must still be readable by the app's page: %d %v", spent.status, spent.header)
			}
			if r := e.do("POST", "/api/v1/tokens", map[string]string{"Origin": foreign}, exchange); allows(t, r, foreign) {
				t.Fatalf("route 1 allowed %s for the demo app", foreign)
			}
			// Another app's origin may read route 1's errors (as any error), never its tokens.
			fresh := mustJSON(map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": e.signUp(t, "cors.other@example.com", "nonce-o"),
				"redirect_uri": e.demo.RedirectURI, "nonce": "nonce-o"})
			if r := e.do("POST", "/api/v1/tokens", map[string]string{"Origin": otherApp}, fresh); r.status != 201 || allows(t, r, otherApp) {
				t.Fatalf("route 1 allowed %s for the demo app (%d)", otherApp, r.status)
			}

			// Elsewhere the token's app decides, in identity and in the services that cache it.
			for _, path := range []string{"/v1/users/me", "/v1/tenants/me"} {
				if r := e.do("GET", path, withOrigin(bearer(access), appOrigin), ""); r.status != 200 || !allows(t, r, appOrigin) {
					t.Fatalf("%s from the app's origin: %d %v", path, r.status, r.header)
				}
				for _, o := range []string{foreign, otherApp, extraOrigin} {
					if r := e.do("GET", path, withOrigin(bearer(access), o), ""); r.status != 200 || allows(t, r, o) {
						t.Fatalf("%s allowed %s (%d)", path, o, r.status)
					}
				}
			}
			if r := e.do("GET", "/v1/tenants/"+e.demo.TenantID, withOrigin(e.read(), appOrigin), ""); r.status != 200 || allows(t, r, appOrigin) {
				t.Fatalf("an API-key answer allowed a browser origin (%d)", r.status)
			}

			// An operator adds an origin; the app event reaches the caches.
			ctx := context.Background()
			if _, err := e.admin.Identity.AddAppOrigin(ctx, &identityv1.AppOriginRequest{AppId: e.demo.AppID, Origin: "HTTPS://Shop.Example:443"}); err != nil {
				t.Fatal(err)
			}
			list, err := e.admin.Identity.ListAppOrigins(ctx, &identityv1.ListAppOriginsRequest{AppId: e.demo.AppID})
			if err != nil || strings.Join(list.GetOrigins(), ",") != extraOrigin || strings.Join(list.GetAllowed(), ",") != appOrigin+","+extraOrigin {
				t.Fatalf("ListAppOrigins = %v, %v", list, err)
			}
			for _, path := range []string{"/v1/users/me", "/v1/tenants/me"} {
				testkit.Eventually(t, path+" allows the added origin", func() bool {
					return allows(t, e.do("GET", path, withOrigin(bearer(access), extraOrigin), ""), extraOrigin)
				})
			}
			if _, err := e.admin.Identity.RemoveAppOrigin(ctx, &identityv1.AppOriginRequest{AppId: e.demo.AppID, Origin: extraOrigin}); err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"/v1/users/me", "/v1/tenants/me"} {
				testkit.Eventually(t, path+" forgets the removed origin", func() bool {
					return !allows(t, e.do("GET", path, withOrigin(bearer(access), extraOrigin), ""), extraOrigin)
				})
			}
		})
	}
}

// A browser hides an answer without Access-Control-Allow-Origin behind a network error. Error
// answers therefore let any app's origin read them (they hold no data), so a page can tell "sign in
// again" (401, 403) and "no such route" (404) from "network down"; successes keep the per-app rule.
func TestBrowsersOfAnyAppReadErrorAnswers(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			const (
				appOrigin = "http://localhost:3000" // the demo app's
				otherApp  = "http://localhost:4000" // the second app's
				foreign   = "https://evil.example"  // no app's
			)
			expired := withOrigin(map[string]string{"Authorization": "Bearer abc.def.ghi"}, otherApp)
			r := e.do("GET", "/v1/users/me", expired, "")
			if r.fails(t, 401); !allows(t, r, otherApp) {
				t.Fatalf("a 401 for a bad token is hidden from a registered origin: %v", r.header)
			}
			if r := e.do("GET", "/v1/users/me", withOrigin(map[string]string{"Authorization": "Bearer abc.def.ghi"}, foreign), ""); r.status != 401 || allows(t, r, foreign) {
				t.Fatalf("an origin no app registered read a 401 (%d)", r.status)
			}
			r = e.do("PUT", "/api/v1/internal/projects/p/apps/a/api-keys/k", withOrigin(nil, appOrigin), `{"name":"x"}`)
			if e.apiFails(t, r, 401, "[E4010]"); !allows(t, r, appOrigin) {
				t.Fatalf("a 401 in the /api/v1 family is hidden: %v", r.header)
			}

			// A deleted user's token: 403, readable.
			tk := e.newUser(t, "gone.user@example.com")
			e.do("DELETE", "/v1/users/me", bearer(tk.access), "").ok(t, 200)
			testkit.Eventually(t, "the deleted user's token is refused", func() bool {
				return e.do("GET", "/v1/tenants/me", bearer(tk.access), "").status == 403
			})
			for _, path := range []string{"/v1/users/me", "/v1/tenants/me"} {
				if r := e.do("GET", path, withOrigin(bearer(tk.access), appOrigin), ""); r.status != 403 || !allows(t, r, appOrigin) {
					t.Fatalf("%s with a deleted user's token: %d, readable %v", path, r.status, r.header)
				}
			}

			// An unknown path, and its preflight.
			if r := e.do("GET", "/v1/no-such-route", withOrigin(nil, appOrigin), ""); r.status != 404 || !allows(t, r, appOrigin) {
				t.Fatalf("404 of an unknown path: %d %v", r.status, r.header)
			}
			if code, h := e.preflight(t, "/v1/no-such-route", otherApp, "GET", "authorization"); code != 404 || h.Get("Access-Control-Allow-Origin") != otherApp || h.Get("Vary") != "Origin" {
				t.Fatalf("preflight of an unknown path: %d %v", code, h)
			}

			// A success still answers only the token's own app's origins.
			live := e.newUser(t, "live.user@example.com")
			if r := e.do("GET", "/v1/users/me", withOrigin(bearer(live.access), otherApp), ""); r.status != 200 || allows(t, r, otherApp) {
				t.Fatalf("a success allowed another app's origin (%d)", r.status)
			}
		})
	}
}
