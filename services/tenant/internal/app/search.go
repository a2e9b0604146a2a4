package app

import (
	"context"
	"strings"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// TenantPage is one page of a tenant search and the cursor of the next ("" on the last).
type TenantPage struct {
	Tenants []domain.Tenant
	Next    string
}

// TenantKey is a tenant's position in a search: its name lower-cased, then its id.
func TenantKey(t domain.Tenant) keyset.Key {
	return keyset.Key{Text: strings.ToLower(t.Name), ID: t.ID}
}

// SearchTenants is the console's tenant search: the app's tenants that are not deleted, by name
// prefix (case-insensitive; a sign-up's tenant bears the user's email) or exact id, a page at a
// time with a keyset cursor (package keyset). Tenants carry their billing state, not their
// addresses.
func (s *Service) SearchTenants(ctx context.Context, appID, query string, pageSize int32, after string) (TenantPage, error) {
	appID, err := domain.ParseID("appId", appID)
	if err != nil {
		return TenantPage{}, err
	}
	q, size, err := keyset.ParseSearch(query, pageSize, after)
	if err != nil {
		return TenantPage{}, err
	}
	tenants, err := s.store.SearchTenants(ctx, appID, q)
	if err != nil {
		return TenantPage{}, err
	}
	tenants, next := keyset.Page(tenants, size, TenantKey)
	return TenantPage{Tenants: tenants, Next: next}, nil
}
