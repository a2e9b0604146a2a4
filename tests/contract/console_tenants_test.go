package contract

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/webpage"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// consoleVisitor is a browser on the console: an HTTP client keeping its cookies that does not
// follow redirects, so each answer is seen as the console gave it.
type consoleVisitor struct {
	t      *testing.T
	base   string
	client *http.Client
}

// consoleMember makes email a console member of project the way a person becomes one (the mailed
// invitation accepted with a password) and answers the password.
func (e *env) consoleMember(t *testing.T, project, email string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: project, Email: email, Name: "Member"}); err != nil {
		t.Fatal(err)
	}
	token := ""
	for _, m := range e.stack.Mailbox.Messages() {
		if tok := seed.InvitationToken(m.Text); m.To == email && tok != "" {
			token = tok
		}
	}
	if token == "" {
		t.Fatalf("no console invitation to %s", email)
	}
	const password = "a long enough passphrase 42"
	if _, err := e.admin.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Member", Password: password,
		ClientAddress: "127.0.0.1", UserAgent: "contract test"}); err != nil {
		t.Fatal(err)
	}
	return password
}

// consoleSignIn signs email in to the console through its sign-in form.
func (e *env) consoleSignIn(t *testing.T, email, password string) *consoleVisitor {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	v := &consoleVisitor{t: t, base: e.stack.BaseURL, client: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	v.get(console.SignInPath)
	if code, _ := v.post(console.SignInPath, url.Values{"email": {email}, "password": {password}}); code != http.StatusSeeOther {
		t.Fatalf("%s's console sign-in = %d", email, code)
	}
	return v
}

func (v *consoleVisitor) do(req *http.Request) (int, string) {
	v.t.Helper()
	res, err := v.client.Do(req)
	if err != nil {
		v.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

func (v *consoleVisitor) get(path string) (int, string) {
	v.t.Helper()
	req, err := http.NewRequest(http.MethodGet, v.base+path, nil)
	if err != nil {
		v.t.Fatal(err)
	}
	return v.do(req)
}

// post sends form with the CSRF token of the visitor's cookie, as the console's forms do.
func (v *consoleVisitor) post(path string, form url.Values) (int, string) {
	v.t.Helper()
	u, _ := url.Parse(v.base + console.Path)
	for _, k := range v.client.Jar.Cookies(u) {
		if k.Name == "berth_console_csrf" {
			form.Set(webpage.CSRFField, k.Value)
		}
	}
	req, err := http.NewRequest(http.MethodPost, v.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		v.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return v.do(req)
}

// A console member of another project gets the console's refusal page for this project's tenants
// list, a tenant's page and its freeze, and the freeze changes nothing; this project's member
// sees the same pages, so the refusals are the project check and not broken pages.
func TestAConsoleMemberOfAnotherProjectGetsRefusalPagesForThisProjectsTenants(t *testing.T) {
	e := start(t, "memory")
	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsiderEmail := "outsider-" + strings.ToLower(e.other.ProjectID[:8]) + "@example.test"
	outsider := e.consoleSignIn(t, outsiderEmail, e.consoleMember(t, e.other.ProjectID, outsiderEmail))
	list := "/console/apps/" + e.demo.AppID + "/tenants"
	detail := list + "/" + e.demo.TenantID
	row := `data-tenant="` + e.demo.TenantID + `"`

	if code, body := owner.get(list); code != http.StatusOK || !strings.Contains(body, row) {
		t.Fatalf("this project's member's tenants page = %d:\n%s", code, body)
	}
	if code, body := owner.get(detail); code != http.StatusOK || !strings.Contains(body, `id="freeze"`) || !strings.Contains(body, `id="tenant-users"`) {
		t.Fatalf("this project's member's tenant page = %d:\n%s", code, body)
	}

	refused := func(what string, code int, body string) {
		t.Helper()
		if code != http.StatusForbidden && code != http.StatusNotFound || !strings.Contains(body, `id="problem"`) {
			t.Errorf("%s: %d, want the refusal page (403 or 404):\n%s", what, code, body)
		}
		for _, leak := range []string{row, `id="tenant-name"`, `id="tenant-users"`, `id="freeze"`} {
			if strings.Contains(body, leak) {
				t.Errorf("%s shows %s of this project's tenant", what, leak)
			}
		}
	}
	code, body := outsider.get(list)
	refused("the tenants list", code, body)
	code, body = outsider.get(list + "?q=" + e.demo.TenantID)
	refused("a search for this project's tenant", code, body)
	code, body = outsider.get(detail)
	refused("the tenant's page", code, body)
	code, body = outsider.post(detail, url.Values{"action": {"freeze"}, "confirm": {"yes"}})
	refused("the tenant's freeze", code, body)
	// Naming the outsider's own app with this project's tenant finds no tenant.
	code, body = outsider.get("/console/apps/" + e.other.AppID + "/tenants/" + e.demo.TenantID)
	refused("this project's tenant under the outsider's app", code, body)
	code, body = outsider.post("/console/apps/"+e.other.AppID+"/tenants/"+e.demo.TenantID, url.Values{"action": {"freeze"}, "confirm": {"yes"}})
	refused("a freeze of this project's tenant under the outsider's app", code, body)

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
	code, body := owner.get(detail + "?mode=test")
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
	if code, body := owner.get(detail); code != http.StatusOK || strings.Contains(body, invoice["id"].GetStringValue()) || !strings.Contains(body, "Invoices (live)") {
		t.Errorf("the tenant page in live mode = %d, shows the test-mode invoice %v:\n%s", code, strings.Contains(body, invoice["id"].GetStringValue()), body)
	}
}
