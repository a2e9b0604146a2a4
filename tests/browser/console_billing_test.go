package browser

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// appAPI calls one of the app's REST routes with its write or read key and answers the status
// and the envelope's data.
func appAPI(t *testing.T, env stacktest.Env, method, path, keyType string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, env.Stack.BaseURL+path, nil)
	key := env.App.ReadKey
	if keyType == "write" {
		key = env.App.WriteKey
	}
	req.Header.Set("X-API-KEY", key)
	req.Header.Set("X-API-KEY-TYPE", keyType)
	req.Header.Set("X-CLIENT-ID", env.App.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	var body struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("%s %s answered no JSON: %q", method, path, raw)
	}
	return res.StatusCode, body.Data
}

// redeem is route 24 for user with the app's write key.
func redeem(t *testing.T, env stacktest.Env, user, code string) int {
	t.Helper()
	status, _ := appAPI(t, env, http.MethodPut, "/v1/users/"+user+"/promotion-codes/"+code, "write")
	return status
}

// freeUnits is the tenant's freeUnits as route 5 shows it.
func freeUnits(t *testing.T, env stacktest.Env, tenant string) int {
	t.Helper()
	status, data := appAPI(t, env, http.MethodGet, "/v1/tenants/"+tenant, "read")
	s, _ := data["freeUnits"].(string)
	n, err := strconv.Atoi(s)
	if status != http.StatusOK || err != nil {
		t.Fatalf("route 5 for %s = %d, freeUnits %v", tenant, status, data["freeUnits"])
	}
	return n
}

// The console's billing page end to end: a promotion code created in the console is redeemed
// through route 24 by a tenant's user with the app's key; the promotion's page shows that tenant's
// redemption and route 5 the tenant's new freeUnits; the limits are edited; once deactivated in
// the console, route 24 refuses the code to another tenant, which redeems it after it is activated
// again. Every page is checked with axe-core and photographed at 1280 and 390 px.
func TestConsoleBillingCreatesAPromotionThatRoute24RedeemsAndShowsTheRedemption(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	fail := failWithPage(t, browser)
	text := func(id string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		if err != nil {
			fail("read #"+id, err)
		}
		return strings.TrimSpace(s)
	}

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), signInToConsole(env)); err != nil {
		fail("sign in", err)
	}

	// The app page links to its billing: the demo's pspx connection, never a secret.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(env.Stack.BaseURL+"/console/apps/"+env.App.AppID),
		chromedp.Click(chromedp.ID("billing-link")),
		chromedp.WaitVisible(chromedp.ID("connections")),
	); err != nil {
		fail("open the billing page", err)
	}
	page := currentPage(browser)
	if !strings.Contains(page, ">pspx") || strings.Contains(page, "sk_test_") || strings.Contains(page, "whsec_") {
		t.Errorf("the connections show no pspx connection, or a secret:\n%s", page)
	}
	check.page(ctx, "billing")

	// A promotion code made in the console.
	code := "CONSOLE-" + strings.ToUpper(stacktest.RandomHex(4))
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#new-promotion summary")),
		chromedp.WaitVisible(chromedp.ID("promotion-code")),
		chromedp.SendKeys(chromedp.ID("promotion-code"), strings.ToLower(code)),
		chromedp.SendKeys(chromedp.ID("promotion-name"), "Console launch"),
		chromedp.SetValue(chromedp.ID("promotion-units"), "7"),
		chromedp.SetValue(chromedp.ID("new-max"), "3"),
		chromedp.Click(chromedp.ID("create-promotion")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
		chromedp.WaitVisible(chromedp.ID("no-redemptions")),
	); err != nil {
		fail("create a promotion code", err)
	}
	if got := text("promotion-code"); got != code {
		t.Errorf("the promotion's page shows code %q, want %q", got, code)
	}
	promotionURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		fail("read the promotion's address", err)
	}
	promotionURL, _, _ = strings.Cut(promotionURL, "?")
	check.page(ctx, "promotion-new")

	// A user of the demo tenant redeems it through route 24 with the app's key.
	tenant, user := env.App.TenantID, env.App.UserIDs[0]
	before := freeUnits(t, env, tenant)
	if status := redeem(t, env, user, strings.ToLower(code)); status != http.StatusOK {
		t.Fatalf("route 24 with the console's code = %d", status)
	}
	if after := freeUnits(t, env, tenant); after != before+7 {
		t.Errorf("route 5's freeUnits went from %d to %d, want +7", before, after)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(promotionURL),
		chromedp.WaitVisible(chromedp.CSS(`#redemptions tr[data-tenant="`+tenant+`"]`)),
	); err != nil {
		fail("see the redemption", err)
	}
	if got := text("promotion-used"); got != "1 / 3" {
		t.Errorf("redeemed %q, want 1 / 3", got)
	}
	if row, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#redemptions tr[data-tenant="`+tenant+`"]`))); err != nil ||
		!strings.Contains(row, user) || !strings.Contains(row, "7 free units") || !strings.Contains(row, " UTC") {
		t.Errorf("the redemption's row = %q (%v), want the user, the grant and the time", row, err)
	}
	check.page(ctx, "promotion-redeemed")

	// Its limits are edited: at most 2, valid until a day next year.
	until := time.Now().UTC().AddDate(1, 0, 0).Format(time.DateOnly)
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("limits-max"), "2"),
		chromedp.SetValue(chromedp.ID("limits-until"), until),
		chromedp.Click(chromedp.ID("save-limits")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("edit the limits", err)
	}
	if got := text("promotion-used"); got != "1 / 2" {
		t.Errorf("after the edit redeemed %q, want 1 / 2", got)
	}
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("limits-until").value`)); err != nil || v != until {
		t.Errorf("the limit's end reads %q (%v), want %s", v, err, until)
	}

	// Deactivated in the console, route 24 refuses the code to a tenant that never redeemed it.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("deactivate")),
		chromedp.WaitVisible(chromedp.ID("activate")),
	); err != nil {
		fail("deactivate the code", err)
	}
	if got := text("promotion-state"); got != "deactivated" {
		t.Errorf("state %q after the deactivation", got)
	}
	check.page(ctx, "promotion-deactivated")
	other := newTenantUser(t, env)
	if status := redeem(t, env, other, code); status != http.StatusBadRequest {
		t.Errorf("route 24 with the deactivated code = %d, want 400", status)
	}
	// The refusal was the deactivation's: activated again, the same tenant redeems it.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("activate")), chromedp.WaitVisible(chromedp.ID("deactivate"))); err != nil {
		fail("activate the code", err)
	}
	if status := redeem(t, env, other, code); status != http.StatusOK {
		t.Errorf("route 24 with the activated code = %d, want 200", status)
	}
}

// newTenantUser makes a tenant of the demo app with one user, answering the user's id.
func newTenantUser(t *testing.T, env stacktest.Env) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tn, err := env.Admin.Tenant.CreateTenant(ctx, &tenantv1.CreateTenantRequest{AppId: env.App.AppID, Name: "Second tenant"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := env.Admin.Identity.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: env.App.AppID, TenantId: tn.GetId(),
		Email: "second-" + stacktest.RandomHex(4) + "@example.com", Name: "Second"})
	if err != nil {
		t.Fatal(err)
	}
	return u.GetId()
}

// A price added to the pspy app's catalog on the console's billing page is listed there with its
// id, and a checkout of route 10 naming that id is paid in the provider's page: route 5 then shows
// the tenant subscribed to exactly that price. Every page is checked with axe-core and
// photographed at 1280 and 390 px.
func TestConsoleBillingAddsACatalogPriceThatACheckoutSubscribesTo(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	py := env.App.PspyApp
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	fail := failWithPage(t, browser)

	product := "Console plan " + stacktest.RandomHex(4)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		signInToConsole(env),
		chromedp.Navigate(env.Stack.BaseURL+"/console/apps/"+py.AppID+"/billing"),
		chromedp.WaitVisible(chromedp.ID("connections")),
		chromedp.Click(chromedp.CSS(`details:has(#price-product) summary`)),
		chromedp.WaitVisible(chromedp.ID("price-product")),
		chromedp.SendKeys(chromedp.ID("price-product"), product),
		chromedp.SetValue(chromedp.ID("price-amount"), "1234"),
		chromedp.SendKeys(chromedp.ID("price-currency"), "EUR"),
		chromedp.SendKeys(chromedp.ID("price-interval"), "1 month"),
		chromedp.Click(chromedp.ID("create-price")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("add a catalog price", err)
	}
	type row struct{ Amount, Interval, ID string }
	listed, err := chromedp.Run(ctx, chromedp.Evaluate[row](`(() => {
		const tr = [...document.querySelectorAll("#prices tbody tr")].find(r => r.cells[0].textContent === `+strconv.Quote(product)+`);
		return tr ? {Amount: tr.cells[1].textContent, Interval: tr.cells[2].textContent, ID: tr.cells[3].textContent} : {};
	})()`))
	if err != nil || listed.ID == "" || listed.Amount != "12.34 EUR" || listed.Interval != "1 month" {
		t.Fatalf("the catalog lists %q as %+v (%v), want 12.34 EUR every month with an id\npage:\n%s", product, listed, err, currentPage(browser))
	}
	check.page(ctx, "billing-price-added")

	// Route 10 with the new price, paid on the provider's page: the tenant's plan is that price.
	payURL := checkout(t, env, py.AppID, py.WriteKey, py.TenantID, subscriptionBody(listed.ID, py.TaxRate))
	q := payInChromium(t, chromium, app, payURL,
		chromedp.WaitVisible(chromedp.CSS(`input[name="outcome"][value="paid"]`)),
		chromedp.Click(chromedp.CSS(`input[name="outcome"][value="paid"]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	if q.Get("status") != "completed" {
		t.Fatalf("the checkout with the console's price landed with %v", q)
	}
	if tn := tenantRead(t, env, py.AppID, py.ReadKey, py.TenantID); tn["mode"] != "subscription" || tn["pspxPriceId"] != listed.ID {
		t.Fatalf("route 5 after paying: mode %v price %v, want a subscription to %s", tn["mode"], tn["pspxPriceId"], listed.ID)
	}
}
