package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

var checkoutFields = map[string]string{"kind": str, "id": str, "hash": str, "nextAction": obj}

func TestCheckoutRoutes(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			pspyKey := e.ownPspyAccount(t)
			t.Run("route 10 refuses bad bodies and wrong callers in the /v1 envelope", e.checkoutRefusals)
			t.Run("the payment page opens only with the session's hash and state", e.paymentPageChecksTheLink)
			t.Run("a pspx subscription paid by card shows in route 5 at once, applied once", e.pspxSubscription)
			t.Run("a pspx one-time payment adds paid units", e.pspxOneTimePayment)
			t.Run("a pspx setup stores the default payment method", e.pspxSetup)
			t.Run("a pspx checkout left without paying stays open", e.pspxAbandoned)
			t.Run("a pspy subscription paid on the test page shows in route 5", e.pspySubscription)
			t.Run("a pspy payment the payer lets fail changes nothing", e.pspyFailed)
			t.Run("a pspy setup stores the mandate as the default payment method and refunds its payment", func(t *testing.T) { e.pspySetup(t, pspyKey) })
			t.Run("a tenant token creates checkouts for its own tenant only", e.checkoutWithToken)
		})
	}
}

// checkoutBody is a route-10 body; over replaces fields (a nil value removes one).
func checkoutBody(price, taxRate, mode string, over map[string]any) string {
	b := map[string]any{"price": price, "taxRate": taxRate, "mode": mode, "quantity": 1, "paymentMethodType": "card",
		"allowedCountry": "DE", "billingAddressCollection": false, "isReverseCharge": false, "state": seed.DemoState, "test": true}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	var parts []string
	for k, v := range b {
		switch v := v.(type) {
		case string:
			parts = append(parts, fmt.Sprintf("%q:%q", k, v))
		default:
			parts = append(parts, fmt.Sprintf("%q:%v", k, v))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (e *env) checkoutPath() string { return "/v1/tenants/" + e.demo.TenantID + "/checkout-sessions" }

func (e *env) checkoutRefusals(t *testing.T) {
	px := e.demo.Pspx
	for name, over := range map[string]map[string]any{
		"short state":                       {"state": "abc"},
		"state with a space":                {"state": strings.Repeat("a", 63) + " "},
		"unknown mode":                      {"mode": "gift"},
		"zero quantity":                     {"quantity": 0},
		"fractional quantity":               {"quantity": 1.5},
		"quantity as text":                  {"quantity": `"one"`},
		"lower-case country":                {"allowedCountry": "de"},
		"sofort":                            {"paymentMethodType": "sofort"},
		"unknown payment method type":       {"paymentMethodType": "cash"},
		"missing price":                     {"price": nil},
		"price unknown at pspx":             {"price": "price_doesnotexist"},
		"tax rate unknown at pspx":          {"taxRate": "txr_doesnotexist"},
		"one-time price for a subscription": {"price": px.Prices.OneTime},
		"mode as a number":                  {"mode": 5},
	} {
		t.Run(name, func(t *testing.T) {
			e.do("POST", e.checkoutPath(), e.write(), checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", over)).fails(t, 400)
		})
	}
	body := checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", nil)
	e.do("POST", e.checkoutPath(), e.read(), body).fails(t, 403)
	e.do("POST", e.checkoutPath(), nil, body).fails(t, 401)
	e.do("POST", "/v1/tenants/"+e.other.TenantID+"/checkout-sessions", e.write(), body).fails(t, 400)
	e.do("POST", "/v1/tenants/not-a-uuid/checkout-sessions", e.write(), body).fails(t, 400)
	// Live mode: the demo's live key is a sandbox key too, so live checkouts work the same way;
	// a price of test mode is unknown there.
	e.do("POST", e.checkoutPath(), e.write(), checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", map[string]any{"test": false})).fails(t, 400)
}

// createCheckout calls route 10 and checks the answer's shape and link.
func (e *env) createCheckout(t *testing.T, headers map[string]string, tenantID, appID, body string) (id, payURL string) {
	t.Helper()
	data := e.do("POST", "/v1/tenants/"+tenantID+"/checkout-sessions", headers, body).ok(t, 200).(map[string]any)
	assertShape(t, "checkout session", data, checkoutFields)
	assertShape(t, "nextAction", data["nextAction"], map[string]string{"url": str})
	id, hash := data["id"].(string), data["hash"].(string)
	want := e.stack.BaseURL + "/pay?client_id=" + appID + "&type=payment&session_id=" + id + "&hash=" + hash
	if got := data["nextAction"].(map[string]any)["url"]; data["kind"] != "checkoutSession" || got != want || len(hash) != 64 {
		t.Fatalf("checkout session = %v, want url %s", data, want)
	}
	return id, want
}

// browser is a cookie-keeping client that stops at every redirect, so each hop is checked.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(u string) (int, string, string) {
	b.t.Helper()
	return b.send(http.MethodGet, u, nil)
}

func (b *browser) post(u string, form url.Values) (int, string, string) {
	b.t.Helper()
	return b.send(http.MethodPost, u, form)
}

func (b *browser) send(method, u string, form url.Values) (int, string, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(raw)
}

// pay opens the payment page with the state, completes the provider's page with form and follows
// the provider back through Berth's return page; it answers where the app's user lands.
func (e *env) pay(t *testing.T, payURL string, form url.Values) *url.URL {
	t.Helper()
	b := newBrowser(t)
	code, providerPage, body := b.get(payURL + "&state=" + seed.DemoState)
	if code != http.StatusSeeOther || providerPage == "" {
		t.Fatalf("payment page: %d %s", code, body)
	}
	if code, _, body = b.get(providerPage); code != http.StatusOK {
		t.Fatalf("provider page: %d %s", code, body)
	}
	code, back, body := b.post(providerPage, form)
	if code != http.StatusSeeOther || !strings.HasPrefix(back, e.stack.BaseURL+"/pay/return?") {
		t.Fatalf("provider page submit: %d to %q: %s", code, back, body)
	}
	return e.returnTo(t, b, back)
}

// returnTo opens Berth's return page and checks it forwards to a demo app's redirect URI.
func (e *env) returnTo(t *testing.T, b *browser, back string) *url.URL {
	t.Helper()
	code, app, body := b.get(back)
	toApp := strings.HasPrefix(app, e.demo.RedirectURI+"?") || strings.HasPrefix(app, e.other.RedirectURI+"?")
	if code != http.StatusSeeOther || !toApp {
		t.Fatalf("return page: %d to %q: %s", code, app, body)
	}
	u, err := url.Parse(app)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func card(number string) url.Values {
	return url.Values{"card_number": {number}, "card_expiry": {"12/34"}, "card_cvc": {"123"}, "name": {"Ada Lovelace"},
		// The bodies name allowedCountry DE, so the provider asks where to ship.
		"shipping_name": {"Ada Lovelace"}, "shipping_line1": {"1 Harbour Street"}, "shipping_postal_code": {"20457"},
		"shipping_city": {"Hamburg"}, "shipping_country": {"DE"}}
}

func (e *env) tenant(t *testing.T, tenantID string, headers map[string]string) map[string]any {
	t.Helper()
	return e.do("GET", "/v1/tenants/"+tenantID, headers, "").ok(t, 200).(map[string]any)
}

func (e *env) paymentPageChecksTheLink(t *testing.T) {
	px := e.demo.Pspx
	_, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", nil))
	b := newBrowser(t)
	wrongState := strings.Repeat("x", 64)
	for name, u := range map[string]string{
		"no state":        payURL,
		"another state":   payURL + "&state=" + wrongState,
		"another hash":    strings.Replace(payURL, "hash=", "hash=0", 1)[:len(payURL)] + "&state=" + seed.DemoState,
		"another app":     strings.Replace(payURL, e.demo.AppID, e.other.AppID, 1) + "&state=" + seed.DemoState,
		"another session": strings.Replace(payURL, "session_id=", "session_id=0", 1) + "&state=" + seed.DemoState,
	} {
		code, location, body := b.get(u)
		if code != http.StatusBadRequest || location != "" || !strings.Contains(body, "not valid") {
			t.Errorf("%s: %d to %q: %s", name, code, location, body)
		}
	}
	code, location, _ := b.get(payURL + "&state=" + seed.DemoState)
	if code != http.StatusSeeOther || !strings.HasPrefix(location, e.demo.Sandbox.Pspx+"/") {
		t.Fatalf("the right link: %d to %q", code, location)
	}
}

func (e *env) pspxSubscription(t *testing.T) {
	px := e.demo.Pspx
	id, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", nil))
	landed := e.pay(t, payURL, card("4242 4242 4242 4242"))
	q := landed.Query()
	if q.Get("state") != seed.DemoState || q.Get("session_id") != id || q.Get("status") != "completed" {
		t.Fatalf("landed on %s", landed)
	}
	tn := e.tenant(t, e.demo.TenantID, e.read())
	paidUntil, err := time.Parse(time.RFC3339, fmt.Sprint(tn["paidUntil"]))
	if tn["mode"] != "subscription" || tn["pspxPriceId"] != px.Prices.Monthly || !strings.HasPrefix(fmt.Sprint(tn["pspxSubscriptionId"]), "sub_") ||
		!strings.HasPrefix(fmt.Sprint(tn["pspxCustomerId"]), "cus_") || err != nil || paidUntil.Before(time.Now().AddDate(0, 0, 27)) {
		t.Fatalf("tenant after a paid subscription: mode %v price %v subscription %v customer %v paidUntil %v",
			tn["mode"], tn["pspxPriceId"], tn["pspxSubscriptionId"], tn["pspxCustomerId"], tn["paidUntil"])
	}
	// The provider redirecting twice (a reload) applies nothing again.
	b := newBrowser(t)
	e.returnTo(t, b, e.stack.BaseURL+"/pay/return?session_id="+id)
	if again := e.tenant(t, e.demo.TenantID, e.read()); again["paidUntil"] != tn["paidUntil"] || again["pspxSubscriptionId"] != tn["pspxSubscriptionId"] {
		t.Fatalf("a second return changed the tenant: %v", again)
	}
	// The link is spent.
	if code, _, _ := b.get(payURL + "&state=" + seed.DemoState); code != http.StatusConflict {
		t.Fatalf("a finished checkout's page answers %d, want 409", code)
	}
}

func (e *env) pspxOneTimePayment(t *testing.T) {
	px := e.demo.Pspx
	before := e.tenant(t, e.demo.TenantID, e.read())["paidUnits"]
	id, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID,
		checkoutBody(px.Prices.OneTime, px.TaxRate, "payment", map[string]any{"quantity": 3}))
	if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
		t.Fatalf("status %s", got)
	}
	// Reloads of the return page racing each other add nothing more.
	var wg sync.WaitGroup
	codes := make([]int, 5)
	for i := range codes {
		wg.Go(func() {
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			if res, err := client.Get(e.stack.BaseURL + "/pay/return?session_id=" + id); err == nil {
				codes[i] = res.StatusCode
				res.Body.Close()
			}
		})
	}
	wg.Wait()
	for _, c := range codes {
		if c != http.StatusSeeOther {
			t.Fatalf("parallel returns answered %v, want 303 each", codes)
		}
	}
	tn := e.tenant(t, e.demo.TenantID, e.read())
	if fmt.Sprint(before) != "0" || tn["paidUnits"] != "3" || tn["pspxOneTimePaymentValidThru"] == "" {
		t.Fatalf("paid units %v -> %v, valid thru %v", before, tn["paidUnits"], tn["pspxOneTimePaymentValidThru"])
	}
}

func (e *env) pspxSetup(t *testing.T) {
	_, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody("", "", "setup", map[string]any{"price": nil, "taxRate": nil}))
	if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
		t.Fatalf("status %s", got)
	}
	if tn := e.tenant(t, e.demo.TenantID, e.read()); !strings.HasPrefix(fmt.Sprint(tn["pspxDefaultPaymentMethodId"]), "pm_") {
		t.Fatalf("default payment method %v", tn["pspxDefaultPaymentMethodId"])
	}
}

func (e *env) pspxAbandoned(t *testing.T) {
	px := e.demo.Pspx
	before := e.tenant(t, e.demo.TenantID, e.read())
	id, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody(px.Prices.Yearly, px.TaxRate, "subscription", nil))
	b := newBrowser(t)
	if code, _, _ := b.get(payURL + "&state=" + seed.DemoState); code != http.StatusSeeOther {
		t.Fatalf("payment page %d", code)
	}
	// The payer cancels at the provider, which sends the browser back.
	landed := e.returnTo(t, b, e.stack.BaseURL+"/pay/return?session_id="+id)
	if landed.Query().Get("status") != "open" || landed.Query().Get("state") != seed.DemoState {
		t.Fatalf("landed on %s", landed)
	}
	if after := e.tenant(t, e.demo.TenantID, e.read()); after["pspxPriceId"] != before["pspxPriceId"] {
		t.Fatalf("an abandoned checkout changed the plan: %v -> %v", before["pspxPriceId"], after["pspxPriceId"])
	}
}

func (e *env) pspyRead() map[string]string {
	return creds(e.demo.PspyApp.ReadKey, "read", e.demo.PspyApp.AppID)
}

func (e *env) pspyWrite() map[string]string {
	return creds(e.demo.PspyApp.WriteKey, "write", e.demo.PspyApp.AppID)
}

func (e *env) pspySubscription(t *testing.T) {
	py := e.demo.PspyApp
	id, payURL := e.createCheckout(t, e.pspyWrite(), py.TenantID, py.AppID, checkoutBody(py.Prices.Monthly, py.TaxRate, "subscription", nil))
	landed := e.pay(t, payURL, url.Values{"method": {"creditcard"}, "outcome": {"paid"}})
	if landed.Query().Get("status") != "completed" || landed.Query().Get("session_id") != id {
		t.Fatalf("landed on %s", landed)
	}
	tn := e.tenant(t, py.TenantID, e.pspyRead())
	if tn["mode"] != "subscription" || tn["pspxPriceId"] != py.Prices.Monthly || !strings.HasPrefix(fmt.Sprint(tn["pspxSubscriptionId"]), "sub_") ||
		!strings.HasPrefix(fmt.Sprint(tn["pspxCustomerId"]), "cst_") || !strings.HasPrefix(fmt.Sprint(tn["pspxDefaultPaymentMethodId"]), "mdt_") || tn["paidUntil"] == "" {
		t.Fatalf("tenant after a paid pspy subscription: %v", tn)
	}
}

func (e *env) pspyFailed(t *testing.T) {
	py := e.demo.PspyApp
	before := e.tenant(t, py.TenantID, e.pspyRead())
	_, payURL := e.createCheckout(t, e.pspyWrite(), py.TenantID, py.AppID,
		checkoutBody(py.Prices.OneTime, py.TaxRate, "payment", map[string]any{"quantity": 2}))
	if got := e.pay(t, payURL, url.Values{"method": {"creditcard"}, "outcome": {"failed"}}).Query().Get("status"); got != "failed" {
		t.Fatalf("status %s", got)
	}
	if after := e.tenant(t, py.TenantID, e.pspyRead()); after["paidUnits"] != before["paidUnits"] {
		t.Fatalf("a failed payment changed paid units: %v -> %v", before["paidUnits"], after["paidUnits"])
	}
}

func (e *env) pspySetup(t *testing.T, key string) {
	py := e.demo.PspyApp
	_, payURL := e.createCheckout(t, e.pspyWrite(), py.TenantID, py.AppID, checkoutBody("", "", "setup", map[string]any{"price": nil, "taxRate": nil}))
	if got := e.pay(t, payURL, url.Values{"method": {"creditcard"}, "outcome": {"paid"}}).Query().Get("status"); got != "completed" {
		t.Fatalf("status %s", got)
	}
	tn := e.tenant(t, py.TenantID, e.pspyRead())
	if !strings.HasPrefix(fmt.Sprint(tn["pspxDefaultPaymentMethodId"]), "mdt_") {
		t.Fatalf("default payment method %v", tn["pspxDefaultPaymentMethodId"])
	}
	// The setup's first payment (the tenant's pspxCheckoutSessionId) was refunded at the provider.
	req, _ := http.NewRequest("GET", e.stack.Sandboxes.PspyURL+"/v2/payments/"+fmt.Sprint(tn["pspxCheckoutSessionId"]), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var payment struct {
		Status         string `json:"status"`
		SequenceType   string `json:"sequenceType"`
		AmountRefunded struct {
			Value string `json:"value"`
		} `json:"amountRefunded"`
	}
	if err := json.NewDecoder(res.Body).Decode(&payment); err != nil || res.StatusCode != http.StatusOK ||
		payment.Status != "paid" || payment.SequenceType != "first" || payment.AmountRefunded.Value != "0.01" {
		t.Fatalf("setup payment at the provider: %d %+v %v", res.StatusCode, payment, err)
	}
}

// ownPspyAccount rotates the pspy demo app's test key to a sandbox account the test knows, so it
// can read the provider's side (pspy apps keep their catalog in Berth, so nothing else moves).
func (e *env) ownPspyAccount(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := "test_" + stacktest.RandomHex(15)
	if _, err := e.admin.Billing.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{
		ConnectionId: e.demo.PspyApp.ProviderUUID, TestSecretKey: key}); err != nil {
		t.Fatal(err)
	}
	return key
}

func (e *env) checkoutWithToken(t *testing.T) {
	px := e.demo.Pspx
	tk := e.newUser(t, "buyer-"+stacktest.RandomHex(4)+"@example.com")
	me := e.do("GET", "/v1/tenants/me", bearer(tk.access), "").ok(t, 200).(map[string]any)
	own := me["id"].(string)
	body := checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", nil)
	e.createCheckout(t, bearer(tk.access), own, e.demo.AppID, body)
	e.do("POST", e.checkoutPath(), bearer(tk.access), body).fails(t, 403)
}
