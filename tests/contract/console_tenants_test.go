package contract

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// A console member of another project gets the console's refusal page for this project's tenants
// list, a tenant's page and its freeze, and the freeze changes nothing; this project's member
// sees the same pages, so the refusals are the project check and not broken pages.
func TestAConsoleMemberOfAnotherProjectGetsRefusalPagesForThisProjectsTenants(t *testing.T) {
	e := start(t, "memory")
	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsiderEmail := "outsider-" + strings.ToLower(e.other.ProjectID[:8]) + "@example.test"
	outsider := e.consoleMember(t, e.other.ProjectID, outsiderEmail)
	list := "/console/apps/" + e.demo.AppID + "/tenants"
	detail := list + "/" + e.demo.TenantID
	row := `data-tenant="` + e.demo.TenantID + `"`

	if p := owner.get(list); p.status != http.StatusOK || !strings.Contains(p.body, row) {
		t.Fatalf("this project's member's tenants page = %d:\n%s", p.status, p.body)
	}
	if p := owner.get(detail); p.status != http.StatusOK || !strings.Contains(p.body, `id="freeze"`) || !strings.Contains(p.body, `id="tenant-users"`) {
		t.Fatalf("this project's member's tenant page = %d:\n%s", p.status, p.body)
	}

	refused := func(what string, p consolePage) {
		t.Helper()
		if p.status != http.StatusForbidden && p.status != http.StatusNotFound || !strings.Contains(p.body, `id="problem"`) {
			t.Errorf("%s: %d, want the refusal page (403 or 404):\n%s", what, p.status, p.body)
		}
		for _, leak := range []string{row, `id="tenant-name"`, `id="tenant-users"`, `id="freeze"`} {
			if strings.Contains(p.body, leak) {
				t.Errorf("%s shows %s of this project's tenant", what, leak)
			}
		}
	}
	refused("the tenants list", outsider.get(list))
	refused("a search for this project's tenant", outsider.get(list+"?q="+e.demo.TenantID))
	refused("the tenant's page", outsider.get(detail))
	refused("the tenant's freeze", outsider.post(detail, url.Values{"action": {"freeze"}, "confirm": {"yes"}}))
	// Naming the outsider's own app with this project's tenant finds no tenant.
	refused("this project's tenant under the outsider's app", outsider.get("/console/apps/"+e.other.AppID+"/tenants/"+e.demo.TenantID))
	refused("a freeze of this project's tenant under the outsider's app",
		outsider.post("/console/apps/"+e.other.AppID+"/tenants/"+e.demo.TenantID, url.Values{"action": {"freeze"}, "confirm": {"yes"}}))

	data := e.do(http.MethodGet, "/v1/tenants/"+e.demo.TenantID, e.read(), "").ok(t, http.StatusOK).(map[string]any)
	if data["freezed"] != false {
		t.Errorf("after the outsider's freezes route 5 shows freezed %v", data["freezed"])
	}
}

// The tenant's page shows what the pspx sandbox holds for the tenant: a card set up through a
// checkout and two units invoiced on it (route 13) appear as the tenant's payments, and the
// provider's invoice with its number and amount in the currency's unit among the test-mode
// invoices; the live ones are empty, since the tenant never paid live.
func TestTheConsolesTenantPageShowsTheProvidersInvoiceAndTheTenantsPayments(t *testing.T) {
	e := start(t, "memory")
	_, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody("", "", "setup", map[string]any{"price": nil, "taxRate": nil}))
	if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
		t.Fatalf("setup status %s", got)
	}
	e.do(http.MethodPost, "/v1/tenants/"+e.demo.TenantID+"/pspx-invoices", e.write(), jsonBody(map[string]any{"price": e.demo.Pspx.Prices.OneTime,
		"mode": "payment", "quantity": 2, "userId": e.demo.UserIDs[0], "test": true})).ok(t, http.StatusCreated)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := e.admin.Billing.GetTenantBilling(ctx, &billingv1.GetTenantBillingRequest{AppId: e.demo.AppID, TenantId: e.demo.TenantID, Test: true})
	if err != nil || len(b.GetInvoices().GetItems()) == 0 {
		t.Fatalf("the tenant's test-mode invoices: %v %v", b, err)
	}
	invoice := b.GetInvoices().GetItems()[0].GetFields()

	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	detail := "/console/apps/" + e.demo.AppID + "/tenants/" + e.demo.TenantID
	page := owner.get(detail + "?mode=test")
	code, body := page.status, page.body
	if code != http.StatusOK {
		t.Fatalf("the tenant page in test mode = %d:\n%s", code, body)
	}
	amount := regexp.MustCompile(`<td>\d+\.\d{2} [A-Z]{3}</td>`)
	for _, want := range []string{"<code>" + invoice["id"].GetStringValue() + "</code>", "charge · invoice · test mode", "checkout · setup · test mode"} {
		if !strings.Contains(body, want) {
			t.Errorf("the tenant page lacks %q:\n%s", want, body)
		}
	}
	if !amount.MatchString(body) {
		t.Errorf("the tenant page shows no invoice amount in the currency's unit:\n%s", body)
	}
	if p := owner.get(detail); p.status != http.StatusOK || strings.Contains(p.body, invoice["id"].GetStringValue()) || !strings.Contains(p.body, "Invoices (live)") {
		t.Errorf("the tenant page in live mode = %d, shows the test-mode invoice %v:\n%s", p.status, strings.Contains(p.body, invoice["id"].GetStringValue()), p.body)
	}
}
