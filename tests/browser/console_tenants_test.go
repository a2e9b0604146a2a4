package browser

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// tenantFrozen reads the tenant's freezed flag through route 5 with the app's read key, as the
// app itself sees it.
func tenantFrozen(t *testing.T, env stacktest.Env, tenantID string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.Stack.BaseURL+"/v1/tenants/"+tenantID, nil)
	req.Header.Set("X-API-KEY", env.App.ReadKey)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", env.App.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var body struct {
		Data struct {
			ID      string `json:"id"`
			Freezed bool   `json:"freezed"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusOK || body.Data.ID != tenantID {
		t.Fatalf("route 5 for %s = %d (%v): %+v", tenantID, res.StatusCode, err, body)
	}
	return body.Data.Freezed
}

// The console's tenants pages end to end: from the app page to the tenants list, a search by the
// demo tenant's id, its page with its users, an operator's freeze that the app sees on route 5,
// and the unfreeze that lifts it; every page checked with axe-core and photographed at 1280 and
// 390 px.
func TestConsoleTenantsSearchOpenFreezeSeenOnRouteFiveAndUnfreeze(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	base, tenant := env.Stack.BaseURL, env.App.TenantID
	fail := failWithPage(t, browser)

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), signInToConsole(env)); err != nil {
		fail("sign in", err)
	}

	// The app page links the tenants page, which lists the app's tenants.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/apps/"+env.App.AppID),
		chromedp.Click(chromedp.ID("tenants-link")),
		chromedp.WaitVisible(chromedp.ID("tenants")),
	); err != nil {
		fail("open the tenants page from the app page", err)
	}
	check.page(ctx, "tenants")

	// A search by the tenant's id finds that one tenant.
	row := `#tenants tr[data-tenant="` + tenant + `"]`
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("tenant-query"), tenant),
		chromedp.Click(chromedp.ID("tenant-search")),
		chromedp.WaitVisible(chromedp.CSS(row)),
	); err != nil {
		fail("search the tenant by id", err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#tenants tbody tr').length`)); err != nil || n != 1 {
		t.Errorf("the search by id lists %d tenants (%v), want 1", n, err)
	}
	check.page(ctx, "tenants-search")

	// The tenant's page shows its users beside its money.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+" a")), chromedp.WaitVisible(chromedp.ID("tenant-name"))); err != nil {
		fail("open the tenant", err)
	}
	for _, user := range env.App.UserIDs {
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#tenant-users tr[data-user="`+user+`"]').length`)); err != nil || n != 1 {
			t.Errorf("the tenant page lists user %s %d times (%v)", user, n, err)
		}
	}
	check.page(ctx, "tenant")
	if tenantFrozen(t, env, tenant) {
		t.Fatal("the demo tenant is frozen before the test froze it")
	}

	// The operator's freeze, behind its confirmation: the page says why, and the app sees it.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("freeze-confirm")),
		chromedp.Click(chromedp.ID("freeze")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
		chromedp.WaitVisible(chromedp.ID("unfreeze")),
	); err != nil {
		fail("freeze the tenant", err)
	}
	if state, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("tenant-frozen"))); err != nil || state != "Frozen by an operator" {
		t.Errorf("the frozen tenant's state reads %q (%v)", state, err)
	}
	check.page(ctx, "tenant-frozen")
	if !tenantFrozen(t, env, tenant) {
		t.Error("route 5 does not show the operator's freeze")
	}

	// Unfreezing lifts it.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("unfreeze")),
		chromedp.WaitVisible(chromedp.ID("freeze")),
	); err != nil {
		fail("unfreeze the tenant", err)
	}
	if tenantFrozen(t, env, tenant) {
		t.Error("route 5 still shows the tenant frozen after the unfreeze")
	}
}
