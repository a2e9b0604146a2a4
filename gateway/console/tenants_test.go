package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/berthhq/berth/pkg/route"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

var (
	tenantsURL = frame{}.TenantsURL(testApp)
	tenantURL  = frame{}.TenantURL(testApp, testTenant)
)

func TestTheTenantsPageSearchesTheMembersAppAndLinksTheNextPageWithTheSameSearch(t *testing.T) {
	f, _, b := newTenantsConsole(t)
	rec := b.get(tenantsURL + "?q=acme&after=cursor-1")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("tenants = %d:\n%s", rec.Code, body)
	}
	calls := f.received("SearchTenants")
	if len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" {
		t.Fatalf("SearchTenants calls %+v, want one with the member's token", calls)
	}
	if in := calls[0].req.(*tenantv1.SearchTenantsRequest); in.GetAppId() != testApp || in.GetQuery() != "acme" || in.GetAfter() != "cursor-1" {
		t.Errorf("SearchTenants(%v), want the app, the query and the cursor", in)
	}
	for _, want := range []string{
		`href="/console/apps/` + testApp + `/tenants/` + testTenant + `">Acme &lt;GmbH&gt;</a>`,
		"price_gold", "2026-12-27 12:00 UTC", `value="acme"`,
		`href="/console/apps/` + testApp + `/tenants?after=` + tenantsCursor + `&amp;q=acme" id="next-page"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the tenants page lacks %q:\n%s", want, body)
		}
	}
}

func TestTheTenantPageShowsTheTenantsUsersAddressesAndMoneyTogether(t *testing.T) {
	f, _, b := newTenantsConsole(t)
	rec := b.get(tenantURL)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("tenant = %d:\n%s", rec.Code, body)
	}
	for _, want := range []string{
		"Acme &lt;GmbH&gt;", "ada@acme.example", "Hafenstraße 1", "20457 Hamburg", // identity's side
		"price_gold", "2026-12-27 12:00 UTC", "2 paid, 6 free", "last on 2026-11-20 08:00 UTC", // the billing state
		"charge · invoice · test mode", "completed", // a payment
		"INV-0001", "12.34 EUR", "Invoices (live)", // the provider's invoice
		"CONSOLE-GIFT", "6 free units, 0 free days", // a promotion received
		`id="freeze-confirm"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the tenant page lacks %q:\n%s", want, body)
		}
	}
	for _, m := range []string{"GetApp", "GetTenant", "GetTenantBilling"} {
		if calls := f.received(m); len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" {
			t.Errorf("%s calls %+v, want one with the member's token", m, calls)
		}
	}
	if in := f.received("GetTenant")[0].req.(*tenantv1.GetTenantRequest); in.GetAppId() != testApp || in.GetTenantId() != testTenant {
		t.Errorf("GetTenant(%v), want the path's app and tenant", in)
	}
	if in := f.received("GetTenantBilling")[0].req.(*billingv1.GetTenantBillingRequest); in.GetAppId() != testApp || in.GetTenantId() != testTenant || in.GetTest() {
		t.Errorf("GetTenantBilling(%v), want the path's app and tenant in live mode", in)
	}

	rec = b.get(tenantURL + "?mode=test")
	if !strings.Contains(rec.Body.String(), "Invoices (test mode)") || !f.received("GetTenantBilling")[1].req.(*billingv1.GetTenantBillingRequest).GetTest() {
		t.Errorf("mode=test did not list the test-mode invoices:\n%s", rec.Body)
	}
}

func TestAnOperatorsFreezeNeedsItsConfirmationShowsWithItsReasonAndIsLifted(t *testing.T) {
	f, _, b := newTenantsConsole(t)
	if rec := b.post(tenantURL, url.Values{"action": {"freeze"}}); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "(confirm)") {
		t.Fatalf("an unconfirmed freeze = %d:\n%s", rec.Code, rec.Body)
	}
	if calls := f.received("SetTenantFrozen"); len(calls) != 0 {
		t.Fatalf("an unconfirmed freeze reached billing: %+v", calls)
	}

	rec := b.post(tenantURL, url.Values{"action": {"freeze"}, "confirm": {"yes"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tenantURL+"?notice=tenantFrozen" {
		t.Fatalf("freeze = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	calls := f.received("SetTenantFrozen")
	if in := calls[0].req.(*billingv1.SetTenantFrozenRequest); len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" ||
		in.GetAppId() != testApp || in.GetTenantId() != testTenant || !in.GetFrozen() {
		t.Fatalf("SetTenantFrozen calls %+v, want one freeze of the path's tenant with the member's token", calls)
	}
	page := b.get(tenantURL + "?notice=tenantFrozen").Body.String()
	for _, want := range []string{"The tenant is frozen.", "Frozen by an operator", `id="unfreeze"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the frozen tenant's page lacks %q:\n%s", want, page)
		}
	}

	rec = b.post(tenantURL, url.Values{"action": {"unfreeze"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tenantURL+"?notice=tenantUnfrozen" {
		t.Fatalf("unfreeze = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if calls := f.received("SetTenantFrozen"); len(calls) != 2 || calls[1].req.(*billingv1.SetTenantFrozenRequest).GetFrozen() {
		t.Fatalf("SetTenantFrozen calls %+v, want the unfreeze second", calls)
	}
	if page := b.get(tenantURL).Body.String(); !strings.Contains(page, `id="freeze"`) || strings.Contains(page, "Frozen by an operator") {
		t.Errorf("the unfrozen tenant's page:\n%s", page)
	}
}

func TestAFreezeWithoutItsCSRFTokenChangesNothing(t *testing.T) {
	f, _, b := newTenantsConsole(t)
	form := url.Values{"action": {"freeze"}, "confirm": {"yes"}, "csrf_token": {"forged"}}
	if rec := b.do(http.MethodPost, tenantURL, form); rec.Code != http.StatusForbidden {
		t.Fatalf("a forged freeze = %d:\n%s", rec.Code, rec.Body)
	}
	if calls := f.received("SetTenantFrozen"); len(calls) != 0 {
		t.Fatalf("a forged freeze reached billing: %+v", calls)
	}
}

// Bad paths and queries are refused before any call, naming the field.
func TestTheTenantPagesRefuseBadPathsAndQueriesNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name, method, target, field string
	}{
		{"an app that is no id", http.MethodGet, Path + "/apps/not-an-id/tenants", "app"},
		{"a tenant that is no id", http.MethodGet, frame{}.TenantURL(testApp, "1234"), "tenant"},
		{"a tenant id as a URN", http.MethodGet, frame{}.TenantURL(testApp, "urn:uuid:"+testTenant), "tenant"},
		{"a search with a control character", http.MethodGet, tenantsURL + "?q=a%00b", "q"},
		{"a search too long", http.MethodGet, tenantsURL + "?q=" + strings.Repeat("a", 255), "q"},
		{"a cursor too long", http.MethodGet, tenantsURL + "?after=" + strings.Repeat("c", maxToken+1), "after"},
		{"an unknown invoice mode", http.MethodGet, tenantURL + "?mode=sandbox", "mode"},
		{"a freeze of a tenant that is no id", http.MethodPost, frame{}.TenantURL(testApp, "x"), "tenant"},
		{"an unknown action", http.MethodPost, tenantURL, "action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, b := newTenantsConsole(t)
			var rec *httptest.ResponseRecorder
			if tc.method == http.MethodPost {
				rec = b.post(tc.target, url.Values{"action": {"delete"}, "confirm": {"yes"}})
			} else {
				rec = b.get(tc.target)
			}
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "("+tc.field+")") {
				t.Fatalf("%s %s = %d, want 400 naming %s:\n%s", tc.method, tc.target, rec.Code, tc.field, rec.Body)
			}
			for _, m := range []string{"GetApp", "SearchTenants", "GetTenant", "GetTenantBilling", "SetTenantFrozen"} {
				if calls := f.received(m); len(calls) != 0 {
					t.Errorf("%s was called: %+v", m, calls)
				}
			}
		})
	}
}

// Another project's app or tenant is refused by the services; each page answers that with its
// message and the navigation, never a 5xx.
func TestRefusedTenantCallsBecomeMessagesOnThePage(t *testing.T) {
	for _, tc := range []struct {
		method, target, call string
		err                  error
		status               int
		text                 string
	}{
		{http.MethodGet, tenantsURL, "SearchTenants", status.Error(codes.PermissionDenied, "another project"), http.StatusForbidden, "not allowed"},
		{http.MethodGet, tenantsURL, "GetApp", status.Error(codes.PermissionDenied, "another project"), http.StatusForbidden, "not allowed"},
		{http.MethodGet, tenantURL, "GetTenant", status.Error(codes.NotFound, "no tenant"), http.StatusNotFound, "belongs to another project"},
		{http.MethodGet, tenantURL, "GetTenantBilling", status.Error(codes.Unavailable, "down"), http.StatusServiceUnavailable, "temporarily unavailable"},
		{http.MethodPost, tenantURL, "SetTenantFrozen", status.Error(codes.PermissionDenied, "another project"), http.StatusForbidden, "not allowed"},
	} {
		t.Run(tc.call, func(t *testing.T) {
			f, _, b := newTenantsConsole(t)
			f.errs[tc.call] = tc.err
			var rec *httptest.ResponseRecorder
			if tc.method == http.MethodPost {
				rec = b.post(tc.target, url.Values{"action": {"freeze"}, "confirm": {"yes"}})
			} else {
				rec = b.get(tc.target)
			}
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.text) || !strings.Contains(rec.Body.String(), `id="sign-out"`) {
				t.Errorf("%s %s with %s refused: %d, want %d with %q and the navigation:\n%s", tc.method, tc.target, tc.call, rec.Code, tc.status, tc.text, rec.Body)
			}
		})
	}
}

func TestTheAppPageLinksItsTenants(t *testing.T) {
	_, _, b := newTenantsConsole(t)
	if body := b.get(frame{}.AppURL(testApp)).Body.String(); !strings.Contains(body, `href="`+tenantsURL+`" id="tenants-link"`) {
		t.Errorf("the app page does not link the tenants page:\n%s", body)
	}
}

func TestMoneyShowsMinorUnitsInTheCurrencysOwnUnit(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{1234, "eur", "12.34 EUR"},
		{5, "usd", "0.05 USD"},
		{-250, "eur", "-2.50 EUR"},
		{1234, "jpy", "1234 JPY"},
		{0, "", "0.00"},
	} {
		if got := money(tc.minor, tc.currency); got != tc.want {
			t.Errorf("money(%d, %q) = %q, want %q", tc.minor, tc.currency, got, tc.want)
		}
	}
}

// A provider invoice lacking fields, or carrying nulls, shows its empty cells rather than failing
// the page.
func TestAnInvoiceLackingFieldsShowsEmptyCells(t *testing.T) {
	bare, _ := structpb.NewStruct(map[string]any{"id": "in_2", "number": nil, "amount_due": "12", "created": nil})
	got := invoicesOf(&billingv1.InvoiceList{Items: []*structpb.Struct{bare}})
	if len(got) != 1 || got[0] != (invoiceLine{ID: "in_2"}) {
		t.Errorf("invoicesOf = %+v, want only the id", got)
	}
	if got := invoicesOf(nil); len(got) != 0 {
		t.Errorf("invoicesOf(nil) = %+v", got)
	}
}

func TestTheTenantsPagesAnswerUnderTheStrictPolicyWithoutInlineStyleOrScript(t *testing.T) {
	_, _, b := newTenantsConsole(t)
	inline := regexp.MustCompile(`<style|<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=`)
	for _, path := range []string{tenantsURL, tenantURL, tenantURL + "?mode=test"} {
		rec := b.get(path)
		if rec.Code != http.StatusOK || inline.MatchString(rec.Body.String()) || !strings.HasPrefix(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s = %d, CSP %q, inline style or script: %q", path, rec.Code, rec.Header().Get("Content-Security-Policy"), inline.FindString(rec.Body.String()))
		}
	}
}

// Every call the tenants pages make admits a member's operator token naming the app, so the
// member's project is checked by the service itself, not by the console.
func TestEveryCallOfTheTenantsPagesIsAnOperatorRouteNamingTheApp(t *testing.T) {
	for _, name := range []protoreflect.FullName{
		"berth.identity.v1.MemberService.GetApp",
		"berth.tenant.v1.TenantAdminService.SearchTenants",
		"berth.tenant.v1.TenantService.GetTenant",
		"berth.billing.v1.BillingAdminService.GetTenantBilling",
		"berth.billing.v1.BillingAdminService.SetTenantFrozen",
	} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
		md, ok := d.(protoreflect.MethodDescriptor)
		if err != nil || !ok {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r := route.Of(md); !r.GetOperator() || r.GetOperatorAppField() != "appId" {
			t.Errorf("%s is no operator route naming the app: %v", name, r)
		}
	}
}

// A page ending on a tenant with a long name has a long cursor; its next-page link still works.
func TestTheNextPageLinkCarriesACursorAsLongAsALongTenantNameMakes(t *testing.T) {
	f, _, b := newTenantsConsole(t)
	cursor := strings.Repeat("QUJD", 400) // base64 of 1,200 bytes: a 256-character name of 4-byte runes and an id
	if rec := b.get(tenantsURL + "?after=" + cursor); rec.Code != http.StatusOK {
		t.Fatalf("a long cursor = %d:\n%s", rec.Code, rec.Body)
	}
	if calls := f.received("SearchTenants"); len(calls) != 1 || calls[0].req.(*tenantv1.SearchTenantsRequest).GetAfter() != cursor {
		t.Errorf("SearchTenants did not get the cursor: %+v", calls)
	}
}
