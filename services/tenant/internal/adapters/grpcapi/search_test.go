package grpcapi_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/grpcx"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestSearchTenantsPagesTheAppsTenantsWithTheirBillingState(t *testing.T) {
	h := newHarness(t, serviceToken)
	for _, name := range []string{"ada@example.test", "Acme", "acme labs", "Zed"} {
		if _, err := h.admin.CreateTenant(asAdmin(), &tenantv1.CreateTenantRequest{AppId: appA, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	other := h.createTenant(t, appB)

	first, err := h.admin.SearchTenants(asAdmin(), &tenantv1.SearchTenantsRequest{AppId: appA, Query: "A", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	next, err := h.admin.SearchTenants(asAdmin(), &tenantv1.SearchTenantsRequest{AppId: appA, Query: "A", PageSize: 2, After: first.GetNext()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tn := range append(first.GetTenants(), next.GetTenants()...) {
		got = append(got, tn.GetName())
	}
	if strings.Join(got, ",") != "Acme,acme labs,ada@example.test" || first.GetNext() == "" || next.GetNext() != "" {
		t.Errorf("pages = %v (next %q, then %q), want Acme, acme labs | ada@example.test", got, first.GetNext(), next.GetNext())
	}
	if b := first.GetTenants()[0].GetBilling(); b == nil || b.GetPaidUnits() != "0" || b.GetFreeUnits() != "0" || first.GetTenants()[0].GetCreatedAt() == "" {
		t.Errorf("first tenant = %v, want its billing state (units 0) and creation time", first.GetTenants()[0])
	}
	byID, err := h.admin.SearchTenants(asAdmin(), &tenantv1.SearchTenantsRequest{AppId: appA, Query: other.GetId()})
	if err != nil || len(byID.GetTenants()) != 0 {
		t.Errorf("another app's tenant by id = %v, %v; want none", byID, err)
	}
}

func TestSearchTenantsRefusesBadRequestsAndOtherCredentials(t *testing.T) {
	h := newHarness(t, serviceToken)
	cases := []struct {
		name  string
		ctx   context.Context
		req   *tenantv1.SearchTenantsRequest
		want  codes.Code
		field string
	}{
		{"no credentials", context.Background(), &tenantv1.SearchTenantsRequest{AppId: appA}, codes.Unauthenticated, ""},
		{"the app's write key", withKey("key-write-a", "write", appA), &tenantv1.SearchTenantsRequest{AppId: appA}, codes.Unauthenticated, ""},
		{"a tenant access token", withToken(h.issue(appA, "")), &tenantv1.SearchTenantsRequest{AppId: appA}, codes.Unauthenticated, ""},
		{"app id not a UUID", asAdmin(), &tenantv1.SearchTenantsRequest{AppId: "app"}, codes.InvalidArgument, "appId"},
		{"page size above 100", asAdmin(), &tenantv1.SearchTenantsRequest{AppId: appA, PageSize: 101}, codes.InvalidArgument, "pageSize"},
		{"a cursor not made by a search", asAdmin(), &tenantv1.SearchTenantsRequest{AppId: appA, After: "Zm9v"}, codes.InvalidArgument, "after"},
		{"a query with a control character", asAdmin(), &tenantv1.SearchTenantsRequest{AppId: appA, Query: "a\x07"}, codes.InvalidArgument, "query"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.admin.SearchTenants(tc.ctx, tc.req)
			st := wantCode(t, err, tc.want)
			if got := grpcx.FieldOf(st); got != tc.field {
				t.Fatalf("field = %q, want %q", got, tc.field)
			}
		})
	}
}
