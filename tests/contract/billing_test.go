package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/stacktest"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// Routes 13 and 19–22 run on the second demo app, whose pspx connection the test points at a
// sandbox account of its own, so it knows the prices: two monthly plans, a one-time price and a
// tax rate.
type pspxPlans struct {
	key                      string
	basic, pro, oneTime, tax string
}

var invoiceListFields = map[string]string{"kind": str, "itemsLength": num, "items": arr, "hasMore": boo}

func TestPspxBillingRoutes(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			p := e.ownPspxAccount(t)
			t.Run("routes 13 and 19–22 refuse bad input and wrong callers in the /v1 envelope", func(t *testing.T) { e.pspxRouteRefusals(t, p) })
			t.Run("route 13 charges the default payment method, a payment then a subscription", func(t *testing.T) { e.invoiceCharges(t, p) })
			t.Run("route 20 pages through the tenant's invoices with both cursors", func(t *testing.T) { e.invoicePages(t) })
			t.Run("route 19 upgrades once the difference is paid, even when sent three times at once", func(t *testing.T) { e.upgrade(t, p) })
			t.Run("route 19 downgrades at the end of the paid period", func(t *testing.T) { e.downgrade(t, p) })
			t.Run("route 22 cancels at the end of the period", func(t *testing.T) { e.cancelAtPeriodEnd(t, p) })
			t.Run("route 21 detaches every payment method and clears the default", func(t *testing.T) { e.deletePaymentMethods(t, p) })
			t.Run("a declined card fails the charge, voids its invoice and changes nothing", e.declinedInvoice)
		})
	}
}

func (e *env) otherWrite() map[string]string { return creds(e.other.WriteKey, "write", e.other.AppID) }
func (e *env) otherRead() map[string]string  { return creds(e.other.ReadKey, "read", e.other.AppID) }

// ownPspxAccount rotates the second app's test key to a new sandbox account and creates its
// catalog there, as an operator would in the provider's dashboard.
func (e *env) ownPspxAccount(t *testing.T) pspxPlans {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := pspxPlans{key: "sk_test_" + stacktest.RandomHex(12)}
	if _, err := e.admin.Billing.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{
		ConnectionId: e.other.Pspx.ConnectionID, TestSecretKey: p.key}); err != nil {
		t.Fatal(err)
	}
	product := e.sandboxCreate(t, p.key, "/v1/products", url.Values{"name": {"Team plan"}})["id"].(string)
	price := func(amount, interval string) string {
		form := url.Values{"product": {product}, "unit_amount": {amount}, "currency": {"eur"}}
		if interval != "" {
			form.Set("recurring[interval]", interval)
		}
		return e.sandboxCreate(t, p.key, "/v1/prices", form)["id"].(string)
	}
	p.basic, p.pro, p.oneTime = price("1000", "month"), price("2500", "month"), price("500", "")
	p.tax = e.sandboxCreate(t, p.key, "/v1/tax_rates", url.Values{"display_name": {"VAT"}, "percentage": {"19"}, "inclusive": {"false"}})["id"].(string)
	return p
}

// sandboxCreate POSTs to the pspx sandbox's API with key.
func (e *env) sandboxCreate(t *testing.T, key, path string, form url.Values) map[string]any {
	t.Helper()
	return e.sandboxCall(t, key, http.MethodPost, path, form)
}

func (e *env) sandboxCall(t *testing.T, key, method, path string, form url.Values) map[string]any {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	} else if len(form) > 0 {
		path += "?" + form.Encode()
	}
	req, _ := http.NewRequest(method, e.stack.Sandboxes.PspxURL+path, body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("sandbox %s %s: %d %v", method, path, res.StatusCode, out)
	}
	return out
}

// advanceClock moves the sandboxes' time on, so periods end and renewals run.
func (e *env) advanceClock(t *testing.T, d time.Duration) {
	t.Helper()
	res, err := http.Post(e.stack.BaseURL+"/_sandbox/clock/advance", "application/json", strings.NewReader(fmt.Sprintf(`{"seconds":%d}`, int(d.Seconds()))))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("clock advance: %d", res.StatusCode)
	}
}

func jsonBody(fields map[string]any) string {
	b, _ := json.Marshal(fields)
	return string(b)
}

func (e *env) otherTenantPath(route string) string {
	return "/v1/tenants/" + e.other.TenantID + "/" + route
}

// withUser is a route 20–22 query naming the second app's demo user, test mode.
func (e *env) withUser(path string, extra ...string) string {
	q := url.Values{"userId": {e.other.UserIDs[0]}, "test": {"true"}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return path + "?" + q.Encode()
}

func (e *env) pspxRouteRefusals(t *testing.T, p pspxPlans) {
	invoice := jsonBody(map[string]any{"price": p.oneTime, "taxRate": p.tax, "mode": "payment", "quantity": 1, "test": true})
	plan := jsonBody(map[string]any{"price": p.pro, "quantity": 1, "test": true})
	// Without a default payment method (nothing set up yet) route 13 has nothing to charge, and
	// without a subscription routes 19 and 22 have nothing to change.
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(), invoice).fails(t, 400)
	e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherWrite(), plan).fails(t, 400)
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-subscriptions")), e.otherWrite(), "").fails(t, 400)
	for name, body := range map[string]map[string]any{
		"mode setup":            {"price": p.oneTime, "mode": "setup", "quantity": 1},
		"zero quantity":         {"price": p.oneTime, "mode": "payment", "quantity": 0},
		"no price":              {"mode": "payment", "quantity": 1},
		"unknown price":         {"price": "price_missing", "mode": "payment", "quantity": 1},
		"another tenant's id":   {"price": p.oneTime, "mode": "payment", "quantity": 1, "tenantId": e.demo.TenantID},
		"another tenant's user": {"price": p.oneTime, "mode": "payment", "quantity": 1, "userId": e.demo.UserIDs[0]},
		"a footer not text":     {"price": p.oneTime, "mode": "payment", "quantity": 1, "footer": 5},
	} {
		t.Run("route 13 "+name, func(t *testing.T) {
			e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(), jsonBody(body)).fails(t, 400)
		})
	}
	for name, path := range map[string]string{
		"no userId":             e.otherTenantPath("pspx-invoices") + "?test=true",
		"another tenant's user": e.otherTenantPath("pspx-invoices") + "?test=true&userId=" + e.demo.UserIDs[0],
		"a userId not a UUID":   e.otherTenantPath("pspx-invoices") + "?test=true&userId=nope",
		"limit 0":               e.withUser(e.otherTenantPath("pspx-invoices"), "limit", "0"),
		"limit 101":             e.withUser(e.otherTenantPath("pspx-invoices"), "limit", "101"),
		"limit not a number":    e.withUser(e.otherTenantPath("pspx-invoices"), "limit", "many"),
		"both cursors":          e.withUser(e.otherTenantPath("pspx-invoices"), "startingAfter", "in_1", "startingbefore", "in_2"),
		"a cursor not an id":    e.withUser(e.otherTenantPath("pspx-invoices"), "startingAfter", "in 1"),
		"a tenant not a UUID":   "/v1/tenants/nope/pspx-invoices?test=true&userId=" + e.other.UserIDs[0],
		"another app's tenant":  "/v1/tenants/" + e.demo.TenantID + "/pspx-invoices?test=true&userId=" + e.other.UserIDs[0],
		"route 21 without user": e.otherTenantPath("pspx-payment-methods") + "?test=true",
		"route 22 without user": e.otherTenantPath("pspx-subscriptions") + "?test=true",
	} {
		t.Run(name, func(t *testing.T) {
			method := "GET"
			if !strings.Contains(path, "pspx-invoices") {
				method = "DELETE"
			}
			e.do(method, path, e.otherWrite(), "").fails(t, 400)
		})
	}
	// Routes 13 and 19–22 are pspx routes: the pspy app gets 400 on each.
	py := e.demo.PspyApp
	pyPath := func(route string) string { return "/v1/tenants/" + py.TenantID + "/" + route }
	pyUser := "?test=true&userId=" + py.UserIDs[0]
	e.do("POST", pyPath("pspx-invoices"), e.pspyWrite(), jsonBody(map[string]any{"price": py.Prices.OneTime, "mode": "payment", "quantity": 1})).fails(t, 400)
	e.do("PUT", pyPath("pspx-subscriptions"), e.pspyWrite(), jsonBody(map[string]any{"price": py.Prices.Monthly, "quantity": 1})).fails(t, 400)
	e.do("GET", pyPath("pspx-invoices")+pyUser, e.pspyRead(), "").fails(t, 400)
	e.do("DELETE", pyPath("pspx-payment-methods")+pyUser, e.pspyWrite(), "").fails(t, 400)
	e.do("DELETE", pyPath("pspx-subscriptions")+pyUser, e.pspyWrite(), "").fails(t, 400)
	// Route × principal: read keys change nothing, credentials are required, another tenant's
	// token is refused; route 20 takes a read or a write key.
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherRead(), invoice).fails(t, 403)
	e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherRead(), plan).fails(t, 403)
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherRead(), "").fails(t, 403)
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-subscriptions")), e.otherRead(), "").fails(t, 403)
	e.do("POST", e.otherTenantPath("pspx-invoices"), nil, invoice).fails(t, 401)
	e.do("GET", e.withUser(e.otherTenantPath("pspx-invoices")), nil, "").fails(t, 401)
	stranger := e.newUser(t, "stranger-"+stacktest.RandomHex(4)+"@example.com")
	e.do("GET", e.withUser(e.otherTenantPath("pspx-invoices")), bearer(stranger.access), "").fails(t, 403)
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-subscriptions")), bearer(stranger.access), "").fails(t, 403)
	for _, h := range []map[string]string{e.otherRead(), e.otherWrite()} {
		list := e.do("GET", e.withUser(e.otherTenantPath("pspx-invoices")), h, "").ok(t, 200)
		assertShape(t, "invoice list", list, invoiceListFields)
		if m := list.(map[string]any); m["kind"] != "pspxInvoices" || m["itemsLength"] != 0.0 || m["hasMore"] != false {
			t.Fatalf("a tenant that never paid lists %v", m)
		}
	}
	// Its own tenant's token may list (with its own user).
	me := e.do("GET", "/v1/tenants/me", bearer(stranger.access), "").ok(t, 200).(map[string]any)
	users := me["users"].([]any)
	own := "/v1/tenants/" + me["id"].(string) + "/pspx-invoices?test=true&userId=" + users[0].(map[string]any)["id"].(string)
	e.do("GET", own, bearer(stranger.access), "").ok(t, 200)
}

// setUpCard runs a setup checkout of the second app's tenant paid with a card.
func (e *env) setUpCard(t *testing.T, number string) {
	t.Helper()
	_, payURL := e.createCheckout(t, e.otherWrite(), e.other.TenantID, e.other.AppID, checkoutBody("", "", "setup", map[string]any{"price": nil, "taxRate": nil}))
	if got := e.pay(t, payURL, card(number)).Query().Get("status"); got != "completed" {
		t.Fatalf("setup status %s", got)
	}
}

func (e *env) otherTenant(t *testing.T) map[string]any {
	t.Helper()
	return e.tenant(t, e.other.TenantID, e.otherRead())
}

func (e *env) invoiceCharges(t *testing.T, p pspxPlans) {
	e.setUpCard(t, "4242 4242 4242 4242")
	method := e.otherTenant(t)["pspxDefaultPaymentMethodId"]
	pi := e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(), jsonBody(map[string]any{"price": p.oneTime, "taxRate": p.tax,
		"mode": "payment", "quantity": 3, "tenantId": e.other.TenantID, "userId": e.other.UserIDs[0], "test": true, "footer": "Thank you\nfor your order"})).ok(t, 201).(map[string]any)
	// 3 × 5.00 + 19 % = 17.85, paid with the default method.
	if pi["kind"] != "pspxPaymentIntent" || pi["object"] != "payment_intent" || pi["status"] != "succeeded" || pi["amount"] != 1785.0 || pi["payment_method"] != method {
		t.Fatalf("payment intent %v", pi)
	}
	tn := e.otherTenant(t)
	if tn["paidUnits"] != "3" || tn["mode"] != "payment" || tn["pspxOneTimePaymentValidThru"] == "" {
		t.Fatalf("tenant after an invoice: units %v mode %v", tn["paidUnits"], tn["mode"])
	}
	// Three identical subscription requests at once subscribe the tenant once; the others are
	// refused (route 20 below lists one subscription invoice).
	subscribe := jsonBody(map[string]any{"price": p.basic, "taxRate": p.tax, "mode": "subscription", "quantity": 1, "test": true})
	answers := make([]response, 3)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(), subscribe) })
	}
	wg.Wait()
	created := 0
	for _, a := range answers {
		if a.status != http.StatusCreated {
			a.fails(t, 400)
			continue
		}
		created++
		if pi = a.ok(t, 201).(map[string]any); pi["status"] != "succeeded" || pi["amount"] != 1190.0 {
			t.Fatalf("subscription's payment intent %v", pi)
		}
	}
	if created != 1 {
		t.Fatalf("%d of 3 racing subscription requests succeeded, want 1", created)
	}
	tn = e.otherTenant(t)
	if tn["mode"] != "subscription" || tn["pspxPriceId"] != p.basic || !strings.HasPrefix(fmt.Sprint(tn["pspxSubscriptionId"]), "sub_") ||
		tn["paidUntil"] == "" || tn["paidUnits"] != "3" {
		t.Fatalf("tenant after a subscription: %v", tn)
	}
	// A second subscription is refused: plans change with route 19.
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(), jsonBody(map[string]any{"price": p.basic, "mode": "subscription", "quantity": 1, "test": true})).fails(t, 400)
}

// invoices lists the second app's tenant's invoices.
func (e *env) invoices(t *testing.T, extra ...string) map[string]any {
	t.Helper()
	list := e.do("GET", e.withUser(e.otherTenantPath("pspx-invoices"), extra...), e.otherRead(), "").ok(t, 200)
	assertShape(t, "invoice list", list, invoiceListFields)
	return list.(map[string]any)
}

func ids(list map[string]any) []string {
	var out []string
	for _, it := range list["items"].([]any) {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

func (e *env) invoicePages(t *testing.T) {
	all := e.invoices(t)
	if all["itemsLength"] != 2.0 || all["hasMore"] != false {
		t.Fatalf("two invoices, got %v", all)
	}
	newest := all["items"].([]any)[0].(map[string]any)
	if newest["object"] != "invoice" || newest["status"] != "paid" || newest["billing_reason"] != "subscription_create" {
		t.Fatalf("newest invoice %v", newest)
	}
	both := ids(all)
	first := e.invoices(t, "limit", "1")
	if got := ids(first); first["hasMore"] != true || len(got) != 1 || got[0] != both[0] {
		t.Fatalf("limit 1: %v", first)
	}
	if got := ids(e.invoices(t, "limit", "1", "startingAfter", both[0])); len(got) != 1 || got[0] != both[1] {
		t.Fatalf("after %s: %v", both[0], got)
	}
	if got := ids(e.invoices(t, "startingbefore", both[1])); len(got) != 1 || got[0] != both[0] {
		t.Fatalf("before %s: %v", both[1], got)
	}
	// A cursor the provider does not know is the caller's mistake.
	e.do("GET", e.withUser(e.otherTenantPath("pspx-invoices"), "startingAfter", "in_unknown"), e.otherRead(), "").fails(t, 400)
}

func (e *env) upgrade(t *testing.T, p pspxPlans) {
	before := len(ids(e.invoices(t)))
	body := jsonBody(map[string]any{"price": p.pro, "taxRate": p.tax, "quantity": 1, "test": true})
	var wg sync.WaitGroup
	statuses := make([]int, 3)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherWrite(), body).status
		})
	}
	wg.Wait()
	for _, s := range statuses {
		if s != http.StatusOK {
			t.Fatalf("three identical upgrades answered %v, want 200 each", statuses)
		}
	}
	list := e.invoices(t)
	if got := len(ids(list)); got != before+1 {
		t.Fatalf("%d invoices after the upgrade, want %d (one upgrade invoice)", got, before+1)
	}
	inv := list["items"].([]any)[0].(map[string]any)
	// The difference of 15.00 for (nearly) the whole period, plus tax, paid at once.
	if inv["status"] != "paid" || inv["amount_paid"].(float64) < 1700 || inv["amount_paid"].(float64) > 1785 || inv["subscription"] != nil {
		t.Fatalf("upgrade invoice %v", inv)
	}
	if tn := e.otherTenant(t); tn["pspxPriceId"] != p.pro {
		t.Fatalf("plan after a paid upgrade: %v", tn["pspxPriceId"])
	}
	// The same plan again changes nothing and invoices nothing.
	e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherWrite(), body).ok(t, 200)
	if got := len(ids(e.invoices(t))); got != before+1 {
		t.Fatalf("a repeated upgrade issued another invoice: %d", got)
	}
	// A price of another interval cannot be switched to mid-period.
	e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherWrite(), jsonBody(map[string]any{"price": p.oneTime, "quantity": 1, "test": true})).fails(t, 400)
}

func (e *env) downgrade(t *testing.T, p pspxPlans) {
	before := e.otherTenant(t)
	e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherWrite(), jsonBody(map[string]any{"price": p.basic, "quantity": 1, "test": true})).ok(t, 200)
	after := e.otherTenant(t)
	if after["pspxPriceId"] != p.pro || after["paidUntil"] != before["paidUntil"] {
		t.Fatalf("a downgrade changed the paid plan now: %v -> %v", before["pspxPriceId"], after["pspxPriceId"])
	}
	// At the period's end the provider renews at the basic price: 10.00 + 19 %.
	e.advanceClock(t, 32*24*time.Hour)
	renewal := e.invoices(t)["items"].([]any)[0].(map[string]any)
	if renewal["billing_reason"] != "subscription_cycle" || renewal["amount_paid"] != 1190.0 {
		t.Fatalf("renewal after a downgrade %v", renewal)
	}
}

func (e *env) cancelAtPeriodEnd(t *testing.T, p pspxPlans) {
	path := e.withUser(e.otherTenantPath("pspx-subscriptions"))
	e.do("DELETE", path, e.otherWrite(), "").ok(t, 200)
	tn := e.otherTenant(t)
	cancelAt, err := time.Parse(time.RFC3339, fmt.Sprint(tn["pspxSubscriptionCancelAt"]))
	if tn["pspxSubscriptionCancelAtPeriodEnd"] != true || err != nil {
		t.Fatalf("tenant after cancelling: %v %v", tn["pspxSubscriptionCancelAtPeriodEnd"], tn["pspxSubscriptionCancelAt"])
	}
	sub := e.sandboxCall(t, p.key, "GET", "/v1/subscriptions/"+tn["pspxSubscriptionId"].(string), nil)
	if sub["cancel_at_period_end"] != true || int64(sub["current_period_end"].(float64)) != cancelAt.Unix() {
		t.Fatalf("provider subscription %v, cancel at %v", sub, cancelAt)
	}
	// Again: the same answer, nothing new.
	e.do("DELETE", path, e.otherWrite(), "").ok(t, 200)
	if again := e.otherTenant(t); again["pspxSubscriptionCancelAt"] != tn["pspxSubscriptionCancelAt"] {
		t.Fatalf("a repeated cancel moved the date: %v", again["pspxSubscriptionCancelAt"])
	}
	// A subscription ending cannot change plan.
	e.do("PUT", e.otherTenantPath("pspx-subscriptions"), e.otherWrite(), jsonBody(map[string]any{"price": p.pro, "quantity": 1, "test": true})).fails(t, 400)
	// Past the period's end the provider ends it (the tenant follows with the provider's event).
	e.advanceClock(t, 32*24*time.Hour)
	if sub = e.sandboxCall(t, p.key, "GET", "/v1/subscriptions/"+tn["pspxSubscriptionId"].(string), nil); sub["status"] != "canceled" {
		t.Fatalf("provider subscription after its period: %v", sub["status"])
	}
}

func (e *env) deletePaymentMethods(t *testing.T, p pspxPlans) {
	e.setUpCard(t, "4242 4242 4242 4242") // a second card beside the first
	tn := e.otherTenant(t)
	customer := tn["pspxCustomerId"].(string)
	if methods := e.sandboxCall(t, p.key, "GET", "/v1/customers/"+customer+"/payment_methods", nil)["data"].([]any); len(methods) < 2 {
		t.Fatalf("payment methods before: %v", methods)
	}
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherWrite(), "").ok(t, 200)
	if methods := e.sandboxCall(t, p.key, "GET", "/v1/customers/"+customer+"/payment_methods", nil)["data"].([]any); len(methods) != 0 {
		t.Fatalf("payment methods after: %v", methods)
	}
	if tn := e.otherTenant(t); tn["pspxDefaultPaymentMethodId"] != "" {
		t.Fatalf("default after deleting: %v", tn["pspxDefaultPaymentMethodId"])
	}
	e.do("DELETE", e.withUser(e.otherTenantPath("pspx-payment-methods")), e.otherWrite(), "").ok(t, 200)
	e.do("POST", e.otherTenantPath("pspx-invoices"), e.otherWrite(), jsonBody(map[string]any{"price": p.oneTime, "mode": "payment", "quantity": 1, "test": true})).fails(t, 400)
}

// declinedInvoice runs on the first demo app, with a card that attaches but whose every charge
// is declined, charged through a tenant token.
func (e *env) declinedInvoice(t *testing.T) {
	px := e.demo.Pspx
	_, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody("", "", "setup", map[string]any{"price": nil, "taxRate": nil}))
	if got := e.pay(t, payURL, card("4000 0000 0000 0341")).Query().Get("status"); got != "completed" {
		t.Fatalf("setup status %s", got)
	}
	before := e.tenant(t, e.demo.TenantID, e.read())
	res := e.do("POST", "/v1/tenants/"+e.demo.TenantID+"/pspx-invoices", e.write(), jsonBody(map[string]any{"price": px.Prices.OneTime, "mode": "payment", "quantity": 2, "test": true}))
	res.fails(t, 400)
	if msg := res.body.(map[string]any)["error"]; !strings.Contains(fmt.Sprint(msg), "declined") {
		t.Fatalf("error %v", msg)
	}
	if after := e.tenant(t, e.demo.TenantID, e.read()); after["paidUnits"] != before["paidUnits"] {
		t.Fatalf("a declined charge changed paid units: %v -> %v", before["paidUnits"], after["paidUnits"])
	}
	list := e.do("GET", "/v1/tenants/"+e.demo.TenantID+"/pspx-invoices?test=true&userId="+e.demo.UserIDs[0], e.read(), "").ok(t, 200).(map[string]any)
	if items := list["items"].([]any); len(items) != 1 || items[0].(map[string]any)["status"] != "void" {
		t.Fatalf("invoices after a declined charge: %v", items)
	}
}
