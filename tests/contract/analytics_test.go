package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/services/sandbox/delivery"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// Item shapes transcribed from the published interface ("Analytics items").
var (
	analyticsTenantFields = func() map[string]string {
		m := map[string]string{}
		for k, v := range tenantFields {
			if k != "kind" && k != "shippingAddress" && k != "billingAddress" && k != "users" {
				m[k] = v
			}
		}
		return m
	}()
	analyticsUserFields = func() map[string]string {
		m := map[string]string{"tenant": obj + orNull}
		for k, v := range userFields {
			if k != "kind" {
				m[k] = v
			}
		}
		return m
	}()
	subscriptionItemFields = map[string]string{
		"id": str, "paid": boo, "test": boo, "cancelled": boo, "until": num, "pspxSubscriptionId": str, "pspxPriceId": str,
		"pspxCustomerId": str, "pspxCouponId": str, "userId": str, "newsletterMemberId": str, "appId": str, "tenantId": str,
		"user": obj + orNull,
	}
	oneTimeItemFields = map[string]string{
		"id": str, "paid": boo, "test": boo, "pspxPriceId": str, "units": num, "unitsBefore": num, "pspxCustomerId": str,
		"pspxCouponId": str, "newsletterMemberId": str, "user": obj + orNull,
	}
	analyticsTenantItemFields = func() map[string]string {
		m := map[string]string{"tenantAddresses": arr, "users": arr}
		for k, v := range analyticsTenantFields {
			m[k] = v
		}
		return m
	}()
	analyticsTenantUserFields = func() map[string]string {
		m := map[string]string{"password": str}
		for k, v := range tenantUserFields {
			m[k] = v
		}
		return m
	}()
)

// analyticsRoutes are the streamed lists with their kinds.
var analyticsRoutes = []struct{ path, kind string }{
	{"/v1/analytics/subscriptions", "analyticsSubscription"},
	{"/v1/analytics/one-time-payments", "analyticsOneTimePayment"},
	{"/v1/analytics/tenants", "analyticsTenant"},
}

func TestAnalyticsListsThroughTheSandboxes(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			t.Run("ranges, keys and tokens are checked as decided", e.analyticsRefusals)
			t.Run("payments, a renewal and a cancellation appear once each with their values", e.analyticsLifecycle)
		})
	}
}

// analyticsList reads one list of the demo app (read key) and checks its envelope and kind.
func (e *env) analyticsList(t *testing.T, path, kind, from, to string) []any {
	t.Helper()
	return e.analyticsListAs(t, e.read(), path, kind, from, to)
}

// analyticsListAs is analyticsList with other credentials. Like the published REST wrapper, it
// sends test=true with the range; the edge ignores the parameter.
func (e *env) analyticsListAs(t *testing.T, headers map[string]string, path, kind, from, to string) []any {
	t.Helper()
	r := e.do("GET", path+"?from="+from+"&to="+to+"&test=true", headers, "")
	data := r.ok(t, 200)
	assertShape(t, path+" data", data, map[string]string{"kind": str, "itemsLength": num, "items": arr})
	d := data.(map[string]any)
	items := d["items"].([]any)
	if d["kind"] != kind || d["itemsLength"] != float64(len(items)) {
		t.Fatalf("%s: kind %v, itemsLength %v with %d items", path, d["kind"], d["itemsLength"], len(items))
	}
	// The keys come in the documented order: kind, itemsLength, items, inside the envelope's.
	if i, j, k := strings.Index(r.raw, `"kind"`), strings.Index(r.raw, `"itemsLength"`), strings.Index(r.raw, `"items"`); !(i < j && j < k) {
		t.Fatalf("%s: data keys out of order: %s", path, r.raw)
	}
	return items
}

func day(offset int) string { return time.Now().UTC().AddDate(0, 0, offset).Format(time.DateOnly) }

func (e *env) analyticsRefusals(t *testing.T) {
	tk := e.newUser(t, "analytics-refusals@example.com")
	for _, r := range analyticsRoutes {
		e.analyticsList(t, r.path, r.kind, day(-365), day(0)) // 366 days counting both ends: allowed
		for _, q := range []string{"", "?from=" + day(0), "?to=" + day(0), "?from=" + day(1) + "&to=" + day(0),
			"?from=" + day(-366) + "&to=" + day(0), "?from=2026-02-30&to=2026-03-01", "?from=2026-3-1&to=2026-03-02",
			"?from=" + day(0) + "T00:00:00Z&to=" + day(0)} {
			e.do("GET", r.path+q, e.read(), "").fails(t, 400)
		}
		q := "?from=" + day(0) + "&to=" + day(0)
		e.do("GET", r.path+q, e.write(), "").fails(t, 403)
		e.do("GET", r.path+q, nil, "").fails(t, 401)
		e.do("GET", r.path+q, bearer(tk.access), "").fails(t, 401)
		e.do("GET", r.path+q, creds(e.demo.ReadKey, "read", e.other.AppID), "").fails(t, 401)
	}
}

// tokenUser is an end user of the demo app signed up through the hosted page, with their token,
// id and tenant.
type tokenUser struct {
	access, id, tenant string
}

func (e *env) tokenUser(t *testing.T, email string) tokenUser {
	t.Helper()
	tk := e.newUser(t, email)
	me := e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200).(map[string]any)
	u := tokenUser{access: tk.access, id: me["id"].(string)}
	u.tenant = e.tenantOf(t, u.id)
	return u
}

// itemsOf lists today's items of a route for tenant (or every item when tenant is "").
func (e *env) itemsOf(t *testing.T, path, kind, tenant string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range e.analyticsList(t, path, kind, day(0), day(0)) {
		m := it.(map[string]any)
		owner, _ := m["tenantId"].(string)
		if u, ok := m["user"].(map[string]any); ok && owner == "" {
			if tn, ok := u["tenant"].(map[string]any); ok {
				owner, _ = tn["id"].(string)
			}
		}
		if id, ok := m["id"].(string); kind == "analyticsTenant" && ok {
			owner = id
		}
		if tenant == "" || owner == tenant {
			out = append(out, m)
		}
	}
	return out
}

// eventuallyItems waits until the route lists want items of tenant (events reach analytics
// asynchronously) and returns them.
func (e *env) eventuallyItems(t *testing.T, path, kind, tenant string, want int, ready func([]map[string]any) bool) []map[string]any {
	t.Helper()
	var items []map[string]any
	testkit.Eventually(t, fmt.Sprintf("%s lists %d items of the tenant", path, want), func() bool {
		items = e.itemsOf(t, path, kind, tenant)
		return len(items) == want && (ready == nil || ready(items))
	})
	return items
}

func epoch(t *testing.T, rfc3339 any) float64 {
	t.Helper()
	at, err := time.Parse(time.RFC3339, fmt.Sprint(rfc3339))
	if err != nil {
		t.Fatalf("not a time: %v", rfc3339)
	}
	return float64(at.Unix())
}

func (e *env) analyticsLifecycle(t *testing.T) {
	// Every webhook delivery goes out three times at once: each effect still shows once.
	if err := e.stack.Sandboxes.Deliveries.SetFaults(delivery.Faults{Duplicate: 2}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stack.Sandboxes.Deliveries.ClearFaults)
	px := e.demo.Pspx
	u := e.tokenUser(t, "analytics-payer@example.com")
	const subs, oneTimes, tenants = "/v1/analytics/subscriptions", "/v1/analytics/one-time-payments", "/v1/analytics/tenants"

	// Two one-time payments by the user's token: units and the units before each.
	for _, quantity := range []int{3, 2} {
		_, payURL := e.createCheckout(t, bearer(u.access), u.tenant, e.demo.AppID, checkoutBody(px.Prices.OneTime, px.TaxRate, "payment", map[string]any{"quantity": quantity}))
		if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
			t.Fatalf("one-time payment: %s", got)
		}
	}
	e.settle(t, time.Minute)
	paid := e.eventuallyItems(t, oneTimes, "analyticsOneTimePayment", u.tenant, 2, nil)
	for i, want := range []struct{ units, before float64 }{{2, 3}, {3, 0}} { // newest first
		it := paid[i]
		assertShape(t, "one-time payment item", it, oneTimeItemFields)
		assertShape(t, "one-time payment user", it["user"], analyticsUserFields)
		assertShape(t, "one-time payment user's tenant", it["user"].(map[string]any)["tenant"], analyticsTenantFields)
		user := it["user"].(map[string]any)
		if it["units"] != want.units || it["unitsBefore"] != want.before || it["paid"] != true || it["test"] != true ||
			it["pspxPriceId"] != px.Prices.OneTime || !strings.HasPrefix(it["pspxCustomerId"].(string), "cus_") || it["pspxCouponId"] != "" ||
			user["id"] != u.id || user["tenant"].(map[string]any)["id"] != u.tenant || it["newsletterMemberId"] != user["newsletterMemberId"] {
			t.Fatalf("one-time payment %d: %v", i, it)
		}
	}

	// A subscription by the user's token, renewed by the provider's clock.
	_, payURL := e.createCheckout(t, bearer(u.access), u.tenant, e.demo.AppID, checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", nil))
	if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
		t.Fatalf("subscription: %s", got)
	}
	e.settle(t, time.Minute)
	tn := e.tenant(t, u.tenant, e.read())
	started := e.eventuallyItems(t, subs, "analyticsSubscription", u.tenant, 1, nil)[0]
	assertShape(t, "subscription item", started, subscriptionItemFields)
	assertShape(t, "subscription user", started["user"], analyticsUserFields)
	if started["paid"] != true || started["test"] != true || started["cancelled"] != false || started["until"] != epoch(t, tn["paidUntil"]) ||
		started["pspxSubscriptionId"] != tn["pspxSubscriptionId"] || started["pspxPriceId"] != px.Prices.Monthly || started["pspxCustomerId"] != tn["pspxCustomerId"] ||
		started["userId"] != u.id || started["appId"] != e.demo.AppID || started["tenantId"] != u.tenant || started["pspxCouponId"] != "" {
		t.Fatalf("started subscription %v\ntenant %v", started, tn)
	}
	e.settle(t, 32*24*time.Hour)
	renewedTenant := e.tenant(t, u.tenant, e.read())
	if renewedTenant["paidUntil"] == tn["paidUntil"] {
		t.Fatalf("the renewal did not move paidUntil: %v", renewedTenant)
	}
	renewed := e.eventuallyItems(t, subs, "analyticsSubscription", u.tenant, 1, func(items []map[string]any) bool {
		return items[0]["until"] == epoch(t, renewedTenant["paidUntil"])
	})[0]
	if renewed["id"] != started["id"] || renewed["paid"] != true || renewed["cancelled"] != false {
		t.Fatalf("renewed subscription %v", renewed)
	}

	// Cancelled at the period's end (route 22), ended by the provider when the period is over.
	cancel := "/v1/tenants/" + u.tenant + "/pspx-subscriptions?" + url.Values{"userId": {u.id}, "test": {"true"}}.Encode()
	e.do("DELETE", cancel, bearer(u.access), "").ok(t, 200)
	e.settle(t, 33*24*time.Hour)
	ended := e.eventuallyItems(t, subs, "analyticsSubscription", u.tenant, 1, func(items []map[string]any) bool { return items[0]["cancelled"] == true })[0]
	if ended["id"] != started["id"] || ended["until"] != renewed["until"] {
		t.Fatalf("ended subscription %v, want the renewed one cancelled", ended)
	}

	// A pspy subscription, checked out with the pspy app's write key (so no payer is known): pspy's
	// ids in the pspx fields.
	py := e.demo.PspyApp
	_, pyURL := e.createCheckout(t, e.pspyWrite(), py.TenantID, py.AppID, checkoutBody(py.Prices.Monthly, py.TaxRate, "subscription", nil))
	if got := e.pay(t, pyURL, url.Values{"method": {"creditcard"}, "outcome": {"paid"}}).Query().Get("status"); got != "completed" {
		t.Fatalf("pspy subscription: %s", got)
	}
	var pyItems []any
	testkit.Eventually(t, "the pspy subscription is listed", func() bool {
		pyItems = e.analyticsListAs(t, e.pspyRead(), subs, "analyticsSubscription", day(0), day(0))
		return len(pyItems) == 1
	})
	pyTenant := e.tenant(t, py.TenantID, e.pspyRead())
	assertShape(t, "pspy subscription item", pyItems[0], subscriptionItemFields)
	if it := pyItems[0].(map[string]any); it["pspxSubscriptionId"] != pyTenant["pspxSubscriptionId"] || !strings.HasPrefix(it["pspxSubscriptionId"].(string), "sub_") ||
		!strings.HasPrefix(it["pspxCustomerId"].(string), "cst_") || it["pspxPriceId"] != py.Prices.Monthly || it["user"] != nil || it["userId"] != "" ||
		it["tenantId"] != py.TenantID || it["paid"] != true || it["test"] != true || it["until"] != epoch(t, pyTenant["paidUntil"]) {
		t.Fatalf("pspy subscription item %v\ntenant %v", it, pyTenant)
	}

	// The tenant was created and changed today: one item with its users (no password).
	items := e.eventuallyItems(t, tenants, "analyticsTenant", u.tenant, 1, nil)
	item := items[0]
	assertShape(t, "tenant item", item, analyticsTenantItemFields)
	users := item["users"].([]any)
	if len(users) != 1 {
		t.Fatalf("tenant item users %v", users)
	}
	assertShape(t, "tenant item user", users[0], analyticsTenantUserFields)
	if tu := users[0].(map[string]any); tu["id"] != u.id || tu["password"] != "" || tu["tenantId"] != true {
		t.Fatalf("tenant item user %v", tu)
	}
	for _, a := range item["tenantAddresses"].([]any) {
		assertShape(t, "tenant address", a, addressFields)
	}

	// Ranges are whole UTC days, both ends included; other days list none of it.
	for _, r := range analyticsRoutes {
		if n := len(e.itemsOf(t, r.path, r.kind, u.tenant)); n == 0 {
			t.Fatalf("%s lists nothing today", r.path)
		}
		for _, span := range [][2]string{{day(-1), day(0)}, {day(0), day(1)}, {day(-365), day(0)}} {
			if !containsTenant(e.analyticsList(t, r.path, r.kind, span[0], span[1]), u.tenant) {
				t.Fatalf("%s from %s to %s misses today's items", r.path, span[0], span[1])
			}
		}
		for _, span := range [][2]string{{day(-2), day(-1)}, {day(1), day(2)}} {
			if containsTenant(e.analyticsList(t, r.path, r.kind, span[0], span[1]), u.tenant) {
				t.Fatalf("%s from %s to %s lists today's items", r.path, span[0], span[1])
			}
		}
	}

	// A rebuild from the stored events gives the same answers.
	before := e.analyticsAnswers(t)
	e.rebuildAnalytics(t)
	if after := e.analyticsAnswers(t); !reflect.DeepEqual(after, before) {
		t.Fatalf("after a rebuild the lists say\n%s\nbefore it they said\n%s", after, before)
	}
}

// containsTenant reports whether any item belongs to tenant (its id, tenantId or user's tenant).
func containsTenant(items []any, tenant string) bool {
	raw, _ := json.Marshal(items)
	return strings.Contains(string(raw), tenant)
}

// analyticsAnswers is today's body of every analytics list, as JSON text.
func (e *env) analyticsAnswers(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, path := range []string{"/v1/analytics/subscriptions", "/v1/analytics/one-time-payments", "/v1/analytics/tenants", "/v1/analytics/sign-ins"} {
		out = append(out, e.do("GET", path+"?from="+day(-1)+"&to="+day(0), e.read(), "").raw)
	}
	return out
}

// rebuildAnalytics calls the operator's rebuild of the analytics read models.
func (e *env) rebuildAnalytics(t *testing.T) {
	t.Helper()
	conn, err := grpc.NewClient(e.stack.Addr("analytics"), append(grpcx.ClientOptions("", nil), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(e.adminToken)))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := analyticsv1.NewAnalyticsAdminServiceClient(conn).RebuildReadModels(ctx, &analyticsv1.RebuildReadModelsRequest{})
	if err != nil || res.GetApplied() == 0 {
		t.Fatalf("rebuild: %v, %v", res, err)
	}
}
