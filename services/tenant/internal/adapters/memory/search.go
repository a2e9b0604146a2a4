package memory

import (
	"context"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// SearchTenants implements app.Store by reading every tenant: the memory store serves
// development and tests, whose apps hold few tenants.
func (s *Store) SearchTenants(_ context.Context, appID string, q keyset.Search) ([]domain.Tenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []domain.Tenant
	for _, t := range s.tenants {
		if t.AppID == appID && !t.Deleted {
			t.ShippingAddress, t.BillingAddress = nil, nil
			live = append(live, t)
		}
	}
	return keyset.Select(live, q, app.TenantKey), nil
}
