package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// pageScript runs in an app page served from another origin than Berth. It calls Berth with
// fetch() exactly as a browser SDK does — a JSON POST to route 1 (preflighted for its
// Content-Type) and a Bearer GET of /v1/users/me (preflighted for Authorization) — and writes what
// happened into #result. A response the browser's CORS check refuses makes fetch throw, which
// lands in "error". %s are JSON values (json.Marshal escapes <, > and &, so they cannot end the
// script).
const pageScript = `<!doctype html><title>App</title><pre id=result></pre>
<script>
const cfg = %s;
(async () => {
  const out = {};
  try {
    let token = cfg.token;
    if (!token) {
      const q = new URLSearchParams(location.search);
      const res = await fetch(cfg.base + "/api/v1/tokens", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({client_id: cfg.app, grant_type: "authorization_code", code: q.get("code"),
          redirect_uri: cfg.redirect, state: q.get("state"), nonce: cfg.nonce, service: q.get("service")}),
      });
      out.tokenStatus = res.status;
      token = (await res.json()).items[0].accessToken;
      out.token = token;
    }
    const me = await fetch(cfg.base + "/v1/users/me", {headers: {Authorization: "Bearer " + token}});
    out.meStatus = me.status;
    out.me = (await me.json()).data;
  } catch (e) {
    out.error = String(e);
  }
  const el = document.getElementById("result");
  el.textContent = JSON.stringify(out);
  el.setAttribute("data-done", "1");
})();
</script>`

// pageResult is what pageScript writes.
type pageResult struct {
	TokenStatus int            `json:"tokenStatus"`
	Token       string         `json:"token"`
	MeStatus    int            `json:"meStatus"`
	Me          map[string]any `json:"me"`
	Error       string         `json:"error"`
}

// appPage serves pageScript with cfg at every path but /favicon.ico.
func appPage(t *testing.T, cfg func() map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		c, _ := json.Marshal(cfg())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, pageScript, c)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// readResult waits for the page's script to finish and decodes its result.
func readResult(t *testing.T, ctx, browser context.Context) pageResult {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#result[data-done]`))); err != nil {
		t.Fatalf("wait for the app page's result: %v\npage:\n%s", err, currentPage(browser))
	}
	text, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#result`)))
	if err != nil {
		t.Fatalf("read the app page's result: %v", err)
	}
	var res pageResult
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatalf("app page result %q: %v", text, err)
	}
	return res
}

func TestAppPageOnItsOwnOriginSignsUpAndCallsBerthCrossOrigin(t *testing.T) {
	chromium := ensureChromium(t)
	var env stacktest.Env
	nonce := stacktest.RandomHex(16)
	var app *httptest.Server
	var pageToken atomic.Pointer[string] // a token the app's page calls with instead of exchanging a code
	app = appPage(t, func() map[string]string {
		cfg := map[string]string{"base": env.Stack.BaseURL, "app": env.App.AppID, "redirect": app.URL + callbackPath, "nonce": nonce}
		if tok := pageToken.Load(); tok != nil {
			cfg["token"] = *tok
		}
		return cfg
	})
	env = stacktest.Start(t, "berth-browser-test", app.URL+callbackPath)
	if app.URL == env.Stack.BaseURL || !strings.HasPrefix(app.URL, "http://127.0.0.1:") {
		t.Fatalf("the app page must be on another origin than Berth (%s vs %s)", app.URL, env.Stack.BaseURL)
	}

	loginURL := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {stacktest.RandomHex(16)}, "type": {"signUp"},
		"redirect_uri": {app.URL + callbackPath}, "nonce": {nonce},
	}.Encode()
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	email := "cors-" + stacktest.RandomHex(4) + "@example.com"
	if err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL)},
		signUpOnTheHostedPage("Cors Test", email),
	)...); err != nil {
		t.Fatalf("drive the login page: %v\npage:\n%s", err, currentPage(browser))
	}
	res := readResult(t, ctx, browser)
	if res.Error != "" || res.TokenStatus != http.StatusCreated || res.Token == "" {
		t.Fatalf("the app page could not exchange its code cross-origin: %+v", res)
	}
	if res.MeStatus != http.StatusOK || res.Me["email"] != email {
		t.Fatalf("the app page could not read /v1/users/me cross-origin: %+v", res)
	}

	t.Run("the app's page sees the 401 of an expired token, not a network error", func(t *testing.T) {
		expired := "abc.def.ghi"
		pageToken.Store(&expired)
		defer pageToken.Store(nil)
		if err := chromedp.Do(ctx, chromedp.Navigate(app.URL+"/signed-out")); err != nil {
			t.Fatal(err)
		}
		if got := readResult(t, ctx, browser); got.Error != "" || got.MeStatus != http.StatusUnauthorized || got.Me != nil {
			t.Fatalf("the app's page could not read the 401: %+v", got)
		}
	})

	t.Run("a page on an origin the app does not allow cannot read Berth's answers", func(t *testing.T) {
		foreign := appPage(t, func() map[string]string {
			return map[string]string{"base": env.Stack.BaseURL, "token": res.Token}
		})
		if err := chromedp.Do(ctx, chromedp.Navigate(foreign.URL+"/elsewhere")); err != nil {
			t.Fatal(err)
		}
		got := readResult(t, ctx, browser)
		if got.Error == "" || got.MeStatus != 0 || got.Me != nil {
			t.Fatalf("a foreign origin read /v1/users/me with a stolen token: %+v", got)
		}
		// The token itself is fine: the same request without a browser's CORS check succeeds,
		// so only the missing Access-Control-Allow-Origin stopped the page.
		req, _ := http.NewRequest(http.MethodGet, env.Stack.BaseURL+"/v1/users/me", nil)
		req.Header.Set("Authorization", "Bearer "+res.Token)
		req.Header.Set("Origin", foreign.URL)
		direct, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = direct.Body.Close()
		if direct.StatusCode != http.StatusOK || direct.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("direct call: %d, Access-Control-Allow-Origin %q", direct.StatusCode, direct.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}
