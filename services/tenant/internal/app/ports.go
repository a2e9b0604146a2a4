package app

import (
	"context"
	"github.com/berthhq/berth/pkg/fault"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Store keeps tenants. Every write commits the tenant and its events atomically: either
// both are stored (and the events later relayed) or neither is.
type Store interface {
	// CreateTenant stores a new tenant; domain.ErrExists when its id is taken.
	CreateTenant(ctx context.Context, t domain.Tenant, evs ...events.Event) error
	// GetTenant returns the tenant of that app; domain.ErrNotFound when it is absent or another
	// app's.
	GetTenant(ctx context.Context, appID, tenantID string) (domain.Tenant, error)
	// UpdateTenant runs fn on a copy of the tenant, with the tenant locked against concurrent
	// updates, and stores the copy and the events fn returns. When fn fails nothing is stored.
	// domain.ErrNotFound when the tenant is absent or another app's.
	UpdateTenant(ctx context.Context, appID, tenantID string, fn func(*domain.Tenant) ([]events.Event, error)) error
	// SearchTenants answers q over the app's tenants that are not deleted, keyed by their name
	// lower-cased (TenantKey): at most q.Limit, in key order (keyset.Select says what matches),
	// without their addresses.
	SearchTenants(ctx context.Context, appID string, q keyset.Search) ([]domain.Tenant, error)
}

// UserDirectory lists the users of a tenant. Users are identity's data, passed through to the
// caller unchanged, so the port speaks identity's published message rather than a copy of it.
type UserDirectory interface {
	// TenantUsers returns the users of the tenant (empty when it has none). When the directory
	// cannot be reached the error wraps ErrUsersUnavailable.
	TenantUsers(ctx context.Context, appID, tenantID string) ([]*identityv1.TenantUser, error)
}

// ErrUsersUnavailable means the user directory could not answer (identity down or timing out); a
// tenant read fails rather than claim the tenant has no users.
var ErrUsersUnavailable = fault.Unavailable(0, "Service temporarily unavailable")
