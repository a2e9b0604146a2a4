package browser

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/webhookrx"
)

// deliveriesWith answers the deliveries rx received whose body holds s.
func deliveriesWith(rx *webhookrx.Receiver, s string) []webhookrx.Delivery {
	var out []webhookrx.Delivery
	for _, d := range rx.Deliveries() {
		if strings.Contains(string(d.Body), s) {
			out = append(out, d)
		}
	}
	return out
}

// changeNickname changes a user through route 18 with the app's write key.
func changeNickname(t *testing.T, env stacktest.Env, userID, nickname string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, env.Stack.BaseURL+"/v1/users/"+userID, strings.NewReader(`{"user":{"nickname":"`+nickname+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-KEY", env.App.WriteKey)
	req.Header.Set("X-API-KEY-TYPE", "write")
	req.Header.Set("X-CLIENT-ID", env.App.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(res.Body)
		t.Fatalf("route 18 = %d %s", res.StatusCode, raw)
	}
}

// The console's events page end to end: a member registers an endpoint pointing at a local
// receiver and copies its secret (shown once), a user changed through route 18 is delivered there
// signed with that secret, the delivery shows on the endpoint's page with its attempt, is sent
// again from there (same webhook-id), and the secret is rotated; every page checked with axe-core
// and photographed at 1280 and 390 px.
func TestConsoleEventsInChromiumRegistersAnEndpointThatGetsASignedDeliveryRetriesItAndRotatesTheSecret(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	hooks := webhookrx.Start(t)
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	base := env.Stack.BaseURL
	fail := failWithPage(t, browser)

	// The copy button writes to the clipboard, which a page may only do with the permission.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.Call(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: base}); err != nil {
			fail("grant "+name, err)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		signInToConsole(env),
		// The app page links to its events.
		chromedp.Navigate(base+"/console/apps/"+env.App.AppID),
		chromedp.Click(chromedp.ID("events-link")),
		chromedp.WaitVisible(chromedp.ID("register")),
	); err != nil {
		fail("open the events page", err)
	}
	check.page(ctx, "events")

	// Register an endpoint for user.updated; its secret is shown once and copied.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("url"), hooks.URL+"/hooks"),
		chromedp.SendKeys(chromedp.ID("types"), "user.updated"),
		chromedp.SendKeys(chromedp.ID("description"), "the browser test's receiver"),
		chromedp.Click(chromedp.ID("register")),
		chromedp.WaitVisible(chromedp.ID("new-secret")),
		chromedp.WaitVisible(chromedp.ID("copy")),
		chromedp.Click(chromedp.ID("copy")),
	); err != nil {
		fail("register an endpoint", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-secret")))
	if err != nil || !strings.HasPrefix(shown, "whsec_") {
		fail("read the secret", err)
	}
	copied, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil || copied != shown {
		t.Fatalf("the clipboard holds %q (%v), want the shown secret %q", copied, err, shown)
	}
	check.page(ctx, "events-created")

	// A user changed through route 18 reaches the receiver, signed with the copied secret.
	changeNickname(t, env, env.App.UserIDs[0], "hooked-in-chromium")
	testkit.Eventually(t, "the receiver gets user.updated", func() bool { return len(deliveriesWith(hooks, "hooked-in-chromium")) > 0 })
	first := deliveriesWith(hooks, "hooked-in-chromium")[0]
	if !webhookrx.Verify(copied, first.ID, first.Timestamp, first.Body, first.Signature) {
		t.Fatalf("the delivery's signature %q does not verify with the copied secret", first.Signature)
	}

	// The endpoint's page shows the delivery with its attempt once the attempt is recorded.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("created-endpoint")), chromedp.WaitVisible(chromedp.ID("recover"))); err != nil {
		fail("open the endpoint", err)
	}
	endpointURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		fail("read the endpoint's address", err)
	}
	testkit.Eventually(t, "the delivery shows as succeeded", func() bool {
		if err := chromedp.Do(ctx, chromedp.Navigate(endpointURL)); err != nil {
			return false
		}
		status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#deliveries .delivery-status") || {}).textContent || ""`))
		return err == nil && strings.HasPrefix(strings.TrimSpace(status), "Succeeded")
	})
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#deliveries .attempts li").length`)); err != nil || n != 1 {
		t.Errorf("the delivery lists %d attempts (%v), want 1", n, err)
	}
	check.page(ctx, "endpoint")

	// Sent again from the page: the receiver gets the same webhook-id a second time.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#deliveries tr[data-delivery] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("retry the delivery", err)
	}
	testkit.Eventually(t, "the retried delivery arrives", func() bool { return len(deliveriesWith(hooks, "hooked-in-chromium")) >= 2 })
	if again := deliveriesWith(hooks, "hooked-in-chromium")[1]; again.ID != first.ID {
		t.Errorf("the retry's webhook-id %q differs from the first %q", again.ID, first.ID)
	}

	// Rotating the secret, behind its confirmation, shows a new one once; the next delivery is
	// signed with it.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("rotate-confirm")),
		chromedp.Click(chromedp.ID("rotate")),
		chromedp.WaitVisible(chromedp.ID("new-secret")),
	); err != nil {
		fail("rotate the secret", err)
	}
	rotated, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-secret")))
	if err != nil || !strings.HasPrefix(rotated, "whsec_") || rotated == copied {
		t.Fatalf("the rotated secret %q (%v) is not a new one", rotated, err)
	}
	check.page(ctx, "endpoint-rotated")
	changeNickname(t, env, env.App.UserIDs[0], "after-the-rotation")
	testkit.Eventually(t, "the receiver gets the change after the rotation", func() bool { return len(deliveriesWith(hooks, "after-the-rotation")) > 0 })
	last := deliveriesWith(hooks, "after-the-rotation")[0]
	if !webhookrx.Verify(rotated, last.ID, last.Timestamp, last.Body, last.Signature) {
		t.Errorf("the delivery after the rotation does not verify with the new secret")
	}
}

// A provider call the app received (the pspx sandbox's events of a checkout paid in Chromium)
// shows on the console's events page with its outcome and attempts; replaying it from the page
// records one more attempt, applied again, and, the call having been applied already, leaves the
// tenant as it was. Every page is checked with axe-core and photographed at 1280 and 390 px.
func TestConsoleEventsInChromiumReplaysAReceivedProviderCall(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	px := env.App.Pspx
	payURL := checkout(t, env, env.App.AppID, env.App.WriteKey, env.App.TenantID, subscriptionBody(px.Prices.Monthly, px.TaxRate))
	if q := payInChromium(t, chromium, app, payURL,
		chromedp.WaitVisible(chromedp.ID("card_number")),
		chromedp.SendKeys(chromedp.ID("card_number"), "4242 4242 4242 4242"),
		chromedp.SendKeys(chromedp.ID("card_expiry"), "12 / 34"),
		chromedp.SendKeys(chromedp.ID("card_cvc"), "123"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	); q.Get("status") != "completed" {
		t.Fatalf("the checkout landed with %v", q)
	}
	paid := tenantRead(t, env, env.App.AppID, env.App.ReadKey, env.App.TenantID)

	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	fail := failWithPage(t, browser)
	eventsURL := env.Stack.BaseURL + "/console/apps/" + env.App.AppID + "/events"
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), signInToConsole(env)); err != nil {
		fail("sign in", err)
	}
	// outcome reads the outcome cell of the received call id ("" for the newest applied one).
	outcome := func(id string) (string, string) {
		t.Helper()
		type call struct{ ID, Outcome string }
		c, err := chromedp.Run(ctx, chromedp.Evaluate[call](`(() => {
			const rows = [...document.querySelectorAll("#inbound tr[data-event]")];
			const r = rows.find(r => `+strconv.Quote(id)+` ? r.dataset.event === `+strconv.Quote(id)+` : r.querySelector(".inbound-outcome").textContent.startsWith("Applied"));
			return r ? {ID: r.dataset.event, Outcome: r.querySelector(".inbound-outcome").textContent.trim()} : {};
		})()`))
		if err != nil {
			fail("read the received calls", err)
		}
		return c.ID, c.Outcome
	}
	var id, before string
	testkit.Eventually(t, "the provider's calls show as applied", func() bool {
		if err := chromedp.Do(ctx, chromedp.Navigate(eventsURL), chromedp.WaitVisible(chromedp.ID("register"))); err != nil {
			return false
		}
		id, before = outcome("")
		return id != ""
	})
	if before != "Applied · attempts: 1" {
		t.Fatalf("the received call %s reads %q before the replay, want one applied attempt", id, before)
	}
	check.page(ctx, "events-inbound")

	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#inbound tr[data-event="`+id+`"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("replay the call", err)
	}
	if _, after := outcome(id); after != "Applied · attempts: 2" {
		t.Errorf("after the replay the call reads %q, want a second applied attempt", after)
	}
	check.page(ctx, "events-replayed")
	again := tenantRead(t, env, env.App.AppID, env.App.ReadKey, env.App.TenantID)
	for _, field := range []string{"mode", "pspxSubscriptionId", "paidUntil", "paidUnits"} {
		if again[field] != paid[field] {
			t.Errorf("the replay of an applied call changed the tenant's %s: %v -> %v", field, paid[field], again[field])
		}
	}
}
