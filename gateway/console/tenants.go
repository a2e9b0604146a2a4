package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// tenants lists an app's tenants: a name prefix or tenant id search, a page at a time with
// tenant's keyset cursor.
func (c *Console) tenants(w http.ResponseWriter, r *http.Request, v visit) {
	id, in, ok := queried(c, w, r, &v, appID, tenantSearchFrom)
	if !ok {
		return
	}
	app, ok := c.readApp(w, r, v, id)
	if !ok {
		return
	}
	page, err := c.Tenants.SearchTenants(v.ctx, &tenantv1.SearchTenantsRequest{AppId: id, Query: in.Query, After: in.After})
	if err != nil {
		c.fail(w, r, v, err, "search the app's tenants")
		return
	}
	c.render(w, r, http.StatusOK, "tenants", tenantsView{frame: c.frame(w, r, v.p, v.member, "console.tenants.title"),
		App: app, Search: in, Tenants: page.GetTenants(), Next: page.GetNext()})
}

// tenant shows one tenant: identity's side (its users, through tenant's route-5 read, and its
// addresses) and billing's (its state with why it is frozen, its payments, the provider's invoices
// in the chosen mode and the promotions it received).
func (c *Console) tenant(w http.ResponseWriter, r *http.Request, v visit) {
	ref, mode, ok := queried(c, w, r, &v, tenantRefOf, invoiceModeFrom)
	if !ok {
		return
	}
	app, ok := c.readApp(w, r, v, ref.App)
	if !ok {
		return
	}
	t, err := c.Tenant.GetTenant(v.ctx, &tenantv1.GetTenantRequest{AppId: ref.App, TenantId: ref.Tenant})
	if err != nil {
		c.fail(w, r, v, err, "read the tenant")
		return
	}
	b, err := c.Billing.GetTenantBilling(v.ctx, &billingv1.GetTenantBillingRequest{AppId: ref.App, TenantId: ref.Tenant, Test: mode == modeTest})
	if err != nil {
		c.fail(w, r, v, err, "read the tenant's billing")
		return
	}
	c.render(w, r, http.StatusOK, "tenant", tenantView{frame: c.frame(w, r, v.p, v.member, "console.tenant.title"),
		App: app, Tenant: t, Billing: b, Mode: mode, Invoices: invoicesOf(b.GetInvoices())})
}

// changeTenant freezes or unfreezes a tenant through billing, which owns the tenant's state.
func (c *Console) changeTenant(w http.ResponseWriter, r *http.Request, v visit) {
	ref, action, ok := posted(c, w, r, &v, tenantRefOf, tenantFrom)
	if !ok {
		return
	}
	frozen := action == tenantFreeze
	if _, err := c.Billing.SetTenantFrozen(v.ctx, &billingv1.SetTenantFrozenRequest{AppId: ref.App, TenantId: ref.Tenant, Frozen: frozen}); err != nil {
		c.fail(w, r, v, err, action+" the tenant")
		return
	}
	notice := "tenantUnfrozen"
	if frozen {
		notice = "tenantFrozen"
	}
	back(w, r, frame{}.TenantURL(ref.App, ref.Tenant), notice)
}

// tenantsView is a page of an app's tenants and the search that found them.
type tenantsView struct {
	frame
	App     *identityv1.App
	Search  tenantSearch
	Tenants []*tenantv1.TenantSummary
	Next    string // the next page's cursor, "" on the last
}

// NextURL is the link to the page after this one, with the same search.
func (v tenantsView) NextURL() string {
	q := url.Values{"after": {v.Next}}
	if v.Search.Query != "" {
		q.Set("q", v.Search.Query)
	}
	return v.TenantsURL(v.App.GetId()) + "?" + q.Encode()
}

// tenantView is one tenant with its money, the provider's invoices in Mode.
type tenantView struct {
	frame
	App      *identityv1.App
	Tenant   *tenantv1.Tenant
	Billing  *billingv1.TenantBilling
	Mode     string
	Invoices []invoiceLine
}

// OtherMode is the invoice mode the page offers to switch to.
func (v tenantView) OtherMode() string {
	if v.Mode == modeTest {
		return modeLive
	}
	return modeTest
}

// invoiceLine is what the page shows of a provider invoice, which arrives as the provider's own
// JSON object: its id and number, status, amount due and when it was made.
type invoiceLine struct {
	ID, Number, Status, Amount, Created string
}

// invoicesOf reads the page's lines from the provider's invoice objects; a field the object lacks
// shows empty rather than failing the page.
func invoicesOf(list *billingv1.InvoiceList) []invoiceLine {
	var out []invoiceLine
	for _, inv := range list.GetItems() {
		f := inv.GetFields()
		line := invoiceLine{ID: str(f["id"]), Number: str(f["number"]), Status: str(f["status"])}
		if due, ok := f["amount_due"].GetKind().(*structpb.Value_NumberValue); ok {
			line.Amount = money(int64(due.NumberValue), str(f["currency"]))
		}
		if at, ok := f["created"].GetKind().(*structpb.Value_NumberValue); ok && at.NumberValue > 0 {
			line.Created = time.Unix(int64(at.NumberValue), 0).UTC().Format("2006-01-02 15:04 UTC")
		}
		out = append(out, line)
	}
	return out
}

// str is a JSON string value, "" for anything else (a null number, for one).
func str(v *structpb.Value) string { return v.GetStringValue() }

// zeroDecimal are the currencies whose minor unit is the unit itself (the providers' amounts are
// in minor units).
var zeroDecimal = map[string]bool{"bif": true, "clp": true, "djf": true, "gnf": true, "jpy": true, "kmf": true, "krw": true,
	"mga": true, "pyg": true, "rwf": true, "ugx": true, "vnd": true, "vuv": true, "xaf": true, "xof": true, "xpf": true}

// money shows an amount in minor units with its currency code: 1234 "eur" is "12.34 EUR".
func money(minor int64, currency string) string {
	code := strings.ToUpper(currency)
	if zeroDecimal[strings.ToLower(currency)] {
		return strings.TrimSpace(fmt.Sprintf("%d %s", minor, code))
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return strings.TrimSpace(fmt.Sprintf("%s%d.%02d %s", sign, minor/100, minor%100, code))
}
