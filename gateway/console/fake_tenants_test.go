package console

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

const (
	testTenant    = "7c3e0a2b-3333-4444-8555-b66667777888"
	tenantsCursor = "cursor-after-acme"
)

// fakeTenants answers the tenants pages' tenant and billing calls as programmed, recording them on
// the identity fake (so errs and received cover them too). It keeps one tenant's freeze, so a
// freeze shows on the next read. The methods the console never calls panic.
type fakeTenants struct {
	tenantv1.TenantAdminServiceClient
	tenantv1.TenantServiceClient
	billingv1.BillingAdminServiceClient

	f      *fake
	mu     sync.Mutex
	frozen string // "" (not frozen), "operator" or "failedPayments"
}

// newTenantsConsole is a console over the identity fake and a tenants fake, signed in.
func newTenantsConsole(t *testing.T) (*fake, *fakeTenants, *browser) {
	t.Helper()
	f := newFake()
	ft := &fakeTenants{f: f}
	c, _ := newConsole(t, f)
	c.Tenants, c.Tenant, c.Billing = ft, ft, ft
	b := newBrowser(t, c)
	b.signIn()
	return f, ft, b
}

func (ft *fakeTenants) SearchTenants(ctx context.Context, in *tenantv1.SearchTenantsRequest, _ ...grpc.CallOption) (*tenantv1.TenantPage, error) {
	if err := ft.f.record(ctx, "SearchTenants", in); err != nil {
		return nil, err
	}
	return &tenantv1.TenantPage{Tenants: []*tenantv1.TenantSummary{
		{Id: testTenant, Name: "Acme <GmbH>", CompanyName: "Acme", Billing: &tenantv1.BillingState{Mode: "subscription",
			PspxPriceId: "price_gold", PaidUntil: "2026-12-27T12:00:00Z", Freezed: ft.state() != ""}},
	}, Next: tenantsCursor}, nil
}

func (ft *fakeTenants) GetTenant(ctx context.Context, in *tenantv1.GetTenantRequest, _ ...grpc.CallOption) (*tenantv1.Tenant, error) {
	if err := ft.f.record(ctx, "GetTenant", in); err != nil {
		return nil, err
	}
	return &tenantv1.Tenant{Kind: "tenant", Id: in.GetTenantId(), Name: "Acme <GmbH>", CompanyName: "Acme",
		BillingAddress: &tenantv1.Address{Name: "Acme Billing", Line1: "Hafenstraße 1", PostalCode: "20457", City: "Hamburg", Country: "DE"},
		Users:          []*identityv1.TenantUser{{Id: "u-1", Email: "ada@acme.example", Name: "Ada", EmailVerified: true}}}, nil
}

func (ft *fakeTenants) GetTenantBilling(ctx context.Context, in *billingv1.GetTenantBillingRequest, _ ...grpc.CallOption) (*billingv1.TenantBilling, error) {
	if err := ft.f.record(ctx, "GetTenantBilling", in); err != nil {
		return nil, err
	}
	reason := ft.state()
	invoice, err := structpb.NewStruct(map[string]any{"id": "in_1", "object": "invoice", "number": "INV-0001", "status": "paid",
		"amount_due": 1234, "currency": "eur", "created": 1795000000})
	if err != nil {
		return nil, err
	}
	return &billingv1.TenantBilling{AppId: in.GetAppId(), TenantId: in.GetTenantId(), Revision: 4, FrozenReason: reason,
		State: &tenantv1.BillingState{Mode: "subscription", PspxPriceId: "price_gold", PaidUntil: "2026-12-27T12:00:00Z",
			PaidUnits: "2", FreeUnits: "6", Freezed: reason != "", FreezedDueFailedPayment: reason == "failedPayments",
			PaymentFailedCount: 1, PaymentFailedDate: "2026-11-20T08:00:00Z"},
		Payments: []*billingv1.TenantPayment{{Id: "p-1", Source: "charge", Kind: "invoice", Test: true, Price: "price_gold", Quantity: 2,
			Status: "completed", CreatedAt: "2026-11-21T09:30:00Z"}},
		Invoices:    &billingv1.InvoiceList{Kind: "pspxInvoices", ItemsLength: 1, Items: []*structpb.Struct{invoice}},
		Redemptions: []*billingv1.PromotionRedemption{{Kind: "redemption", Code: "CONSOLE-GIFT", TenantId: in.GetTenantId(), FreeUnits: 6, At: "2026-11-02T10:00:00Z"}},
	}, nil
}

func (ft *fakeTenants) SetTenantFrozen(ctx context.Context, in *billingv1.SetTenantFrozenRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := ft.f.record(ctx, "SetTenantFrozen", in); err != nil {
		return nil, err
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.frozen = ""
	if in.GetFrozen() {
		ft.frozen = "operator"
	}
	return &emptypb.Empty{}, nil
}

func (ft *fakeTenants) state() string {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.frozen
}
