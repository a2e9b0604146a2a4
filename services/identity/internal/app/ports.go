package app

import (
	"context"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Store errors: lookups return an error matching domain.ErrNotFound for absent rows; user writes
// return domain.ErrEmailTaken when another user of the app has the email (case-insensitively).
//
// Update methods run fn on a copy of the current row inside the store's transaction (Postgres: one
// transaction with the row locked; memory: under the store's lock). When fn returns an error
// nothing is written. Otherwise the changed row and the events fn returned are committed together,
// so a change is never published without being stored, nor stored without being published.

// Projects stores projects.
type Projects interface {
	CreateProject(ctx context.Context, p domain.Project) error
	GetProject(ctx context.Context, id string) (domain.Project, error)
}

// Apps stores apps.
type Apps interface {
	CreateApp(ctx context.Context, a domain.App) error // the project must exist
	GetApp(ctx context.Context, id string) (domain.App, error)
	UpdateApp(ctx context.Context, id string, fn func(*domain.App) ([]events.Event, error)) (domain.App, error)
}

// APIKeys stores API keys (id and hash only).
type APIKeys interface {
	// CreateAPIKey stores k and evs atomically; the app must exist.
	CreateAPIKey(ctx context.Context, k domain.APIKey, evs ...events.Event) error
	GetAPIKey(ctx context.Context, id string) (domain.APIKey, error)
}

// Users stores users; every lookup is scoped to one app.
type Users interface {
	CreateUser(ctx context.Context, u domain.User) error // the app must exist
	GetUser(ctx context.Context, appID, userID string) (domain.User, error)
	// GetUserByEmail matches the email case-insensitively.
	GetUserByEmail(ctx context.Context, appID, email string) (domain.User, error)
	UpdateUser(ctx context.Context, appID, userID string, fn func(*domain.User) ([]events.Event, error)) (domain.User, error)
	// ListTenantUsers returns the tenant's users that are not deleted, oldest first.
	ListTenantUsers(ctx context.Context, appID, tenantID string) ([]domain.User, error)
}

// Roles stores user roles.
type Roles interface {
	// CreateRole needs an existing app; it returns domain.ErrRoleTaken when the app already has a
	// role of that name (case-insensitively).
	CreateRole(ctx context.Context, r domain.UserRole) error
	// ListRoles returns the app's roles sorted by name.
	ListRoles(ctx context.Context, appID string) ([]domain.UserRole, error)
}

// Store is every port the identity use cases need; each adapter implements all of them over one
// database (or one lock) so that cross-entity rules hold.
type Store interface {
	Projects
	Apps
	APIKeys
	Users
	Roles
}
