package tenant

import (
	"context"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/convert"
	"github.com/berthhq/berth/services/billing/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Tenants implements app.Tenants over the tenant context's internal API.
type Tenants struct {
	client tenantv1.TenantInternalServiceClient
}

// NewTenants returns the adapter over a tenant client (its calls must carry the service token).
func NewTenants(c tenantv1.TenantInternalServiceClient) *Tenants { return &Tenants{client: c} }

// Apply sends the account's state at its revision; the tenant context ignores revisions it has.
func (t *Tenants) Apply(ctx context.Context, a domain.Account) error {
	_, err := t.client.ApplyBillingState(ctx, &tenantv1.ApplyBillingStateRequest{
		AppId: a.AppID, TenantId: a.TenantID, Revision: a.Revision, State: convert.State(a.State),
	})
	return err
}

// errTenantNotFound answers a tenant that is absent, another app's or deleted alike.
var errTenantNotFound = fault.NotFound("Tenant not found")

// Tenant asks the tenant context for the app's live tenant.
func (t *Tenants) Tenant(ctx context.Context, appID, tenantID string) (app.TenantRef, error) {
	ref, err := t.client.GetTenantRef(ctx, &tenantv1.GetTenantRefRequest{AppId: appID, TenantId: tenantID})
	if err != nil {
		return app.TenantRef{}, grpcx.Downstream(err, "get tenant ref", errTenantNotFound)
	}
	return app.TenantRef{ID: ref.GetTenantId(), Name: ref.GetName(), CompanyName: ref.GetCompanyName()}, nil
}
