package tenant

import (
	"context"

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
