package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// UserSnapshot is the latest state of a user that analytics has seen, per (AppID, UserID).
type UserSnapshot struct {
	AppID     string
	UserID    string
	TenantRef string // the user's tenant; "" when it has none
	Deleted   bool
	AsOf      time.Time              // time of the event the snapshot comes from
	User      *identityv1.TenantUser // nil for a user known only from its deletion
}

// TenantSnapshot is the latest state of a tenant that analytics has seen, per (AppID, TenantID).
type TenantSnapshot struct {
	AppID    string
	TenantID string
	AsOf     time.Time // time of the event the snapshot comes from
	Tenant   *tenantv1.Tenant
}

// SignInRecord is a sign-in with the current snapshots of its user and of the user's tenant.
type SignInRecord struct {
	SignIn domain.SignIn
	User   *UserSnapshot   // nil when no event about the user has been applied
	Tenant *TenantSnapshot // nil when the user has no tenant or the tenant is not known yet
}

// Store keeps the analytics read models. Ids are canonical lower-case UUIDs; times are UTC with
// microsecond precision. Writes made with a ctx that carries a transaction (the events inbox's)
// join it, so an event's effects and its inbox record commit together.
//
// Snapshots only move forward: a snapshot whose AsOf is before the stored one's is ignored, since
// events of different types may be applied out of order (redeliveries, replays) and a stale
// snapshot must never hide a newer one. A snapshot as new as the stored one replaces it.
type Store interface {
	// RecordSignIn stores a sign-in; one whose id is stored already is left as it is.
	RecordSignIn(ctx context.Context, s domain.SignIn) error
	// PutUser stores u unless the stored snapshot is newer. A user marked deleted stays deleted.
	PutUser(ctx context.Context, u UserSnapshot) error
	// MarkUserDeleted marks the user deleted, keeping the data of its snapshot. Without a snapshot
	// it stores one with no user data (tenantRef as given), so an older event arriving later cannot
	// bring the user back.
	MarkUserDeleted(ctx context.Context, appID, userID, tenantRef string, at time.Time) error
	// PutTenant stores t unless the stored snapshot is newer.
	PutTenant(ctx context.Context, t TenantSnapshot) error
	// ListSignIns returns the app's sign-ins with from <= At < to, newest first (ties by id,
	// descending), each with the current snapshot of its user and of that user's current tenant.
	ListSignIns(ctx context.Context, appID string, from, to time.Time) ([]SignInRecord, error)
}
