package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// callAPI sends a /v1 request with the app's API key and decodes the envelope's data into out.
func callAPI(t *testing.T, env stacktest.Env, method, path, appID, key, keyType, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, env.Stack.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-KEY", key)
	req.Header.Set("X-API-KEY-TYPE", keyType)
	req.Header.Set("X-CLIENT-ID", appID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	envelope := struct {
		Data any `json:"data"`
	}{Data: out}
	if err := json.NewDecoder(res.Body).Decode(&envelope); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d, %v", method, path, res.StatusCode, err)
	}
}

// checkout calls route 10 as the app's server does and answers the payment page URL with the
// state appended, as the app hands it to the browser.
func checkout(t *testing.T, env stacktest.Env, appID, writeKey, tenantID, body string) string {
	t.Helper()
	var session struct {
		NextAction struct {
			URL string `json:"url"`
		} `json:"nextAction"`
	}
	callAPI(t, env, http.MethodPost, "/v1/tenants/"+tenantID+"/checkout-sessions", appID, writeKey, "write", body, &session)
	if session.NextAction.URL == "" {
		t.Fatalf("route 10 answered no nextAction.url: %+v", session)
	}
	return session.NextAction.URL + "&state=" + seed.DemoState
}

// tenantRead is route 5 with the app's read key.
func tenantRead(t *testing.T, env stacktest.Env, appID, readKey, tenantID string) map[string]any {
	t.Helper()
	tenant := map[string]any{}
	callAPI(t, env, http.MethodGet, "/v1/tenants/"+tenantID, appID, readKey, "read", "", &tenant)
	return tenant
}

// payInChromium opens the payment page, lets fill complete the provider's page and waits for the
// app's return URL; it answers the query the app received.
func payInChromium(t *testing.T, chromium string, app *callbackApp, payURL string, fill ...chromedp.Action[chromedp.Void]) url.Values {
	t.Helper()
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	actions := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(payURL)}, fill...)
	actions = append(actions, chromedp.WaitVisible(chromedp.ID("signed-in")))
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("pay in the browser: %v\npage:\n%s", err, currentPage(browser))
	}
	select {
	case q := <-app.queries:
		return q
	default:
		t.Fatal("the app's payment return URL was never requested")
		return nil
	}
}

func subscriptionBody(price, taxRate string) string {
	return fmt.Sprintf(`{"price":%q,"taxRate":%q,"mode":"subscription","quantity":1,"paymentMethodType":"card","state":%q,"test":true}`,
		price, taxRate, seed.DemoState)
}

func TestPspySubscriptionPaidInChromiumShowsInTheTenant(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	py := env.App.PspyApp

	payURL := checkout(t, env, py.AppID, py.WriteKey, py.TenantID, subscriptionBody(py.Prices.Monthly, py.TaxRate))
	q := payInChromium(t, chromium, app, payURL,
		chromedp.WaitVisible(chromedp.CSS(`input[name="outcome"][value="paid"]`)),
		chromedp.Click(chromedp.CSS(`input[name="outcome"][value="paid"]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	if q.Get("status") != "completed" || q.Get("state") != seed.DemoState || q.Get("session_id") == "" {
		t.Fatalf("the app received %v", q)
	}
	tn := tenantRead(t, env, py.AppID, py.ReadKey, py.TenantID)
	if tn["mode"] != "subscription" || !strings.HasPrefix(fmt.Sprint(tn["pspxSubscriptionId"]), "sub_") || tn["paidUntil"] == "" {
		t.Fatalf("route 5 after paying: mode %v subscription %v paidUntil %v", tn["mode"], tn["pspxSubscriptionId"], tn["paidUntil"])
	}
}

func TestPspxSubscriptionPaidByCardInChromiumShowsInTheTenant(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	px := env.App.Pspx

	payURL := checkout(t, env, env.App.AppID, env.App.WriteKey, env.App.TenantID, subscriptionBody(px.Prices.Monthly, px.TaxRate))
	q := payInChromium(t, chromium, app, payURL,
		chromedp.WaitVisible(chromedp.ID("card_number")),
		chromedp.SendKeys(chromedp.ID("card_number"), "4242 4242 4242 4242"),
		chromedp.SendKeys(chromedp.ID("card_expiry"), "12 / 34"),
		chromedp.SendKeys(chromedp.ID("card_cvc"), "123"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	if q.Get("status") != "completed" || q.Get("state") != seed.DemoState || q.Get("session_id") == "" {
		t.Fatalf("the app received %v", q)
	}
	tn := tenantRead(t, env, env.App.AppID, env.App.ReadKey, env.App.TenantID)
	if tn["mode"] != "subscription" || tn["pspxPriceId"] != px.Prices.Monthly || !strings.HasPrefix(fmt.Sprint(tn["pspxSubscriptionId"]), "sub_") || tn["paidUntil"] == "" {
		t.Fatalf("route 5 after paying: mode %v price %v subscription %v paidUntil %v", tn["mode"], tn["pspxPriceId"], tn["pspxSubscriptionId"], tn["paidUntil"])
	}
}
