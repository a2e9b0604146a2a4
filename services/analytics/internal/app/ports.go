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

// The read models' storage ports, one per model: sign-ins, user snapshots, tenant snapshots,
// subscriptions and one-time payments. Ids are canonical lower-case UUIDs; times are UTC with
// microsecond precision. Writes made with a ctx that carries a transaction (the events inbox's)
// join it, so an event's effects and its inbox record commit together.
//
// Snapshots only move forward: a snapshot whose AsOf is before the stored one's is ignored, since
// events of different types may be applied out of order (redeliveries, replays) and a stale
// snapshot must never hide a newer one. A snapshot as new as the stored one replaces it.
//
// The lists of routes 6, 7 and 9 can be long, so they are visited rather than returned: each
// reads one consistent snapshot of the store, hands v the number of records first, then each
// record in order, and stops at the first error v returns. Ranges are [from, to).

// SignIns keeps the sign-ins of route 8.
type SignIns interface {
	// RecordSignIn stores a sign-in; one whose id is stored already is left as it is.
	RecordSignIn(ctx context.Context, s domain.SignIn) error
	// ListSignIns returns the app's sign-ins with from <= At < to, newest first (ties by id,
	// descending), each with the current snapshot of its user and of that user's current tenant.
	ListSignIns(ctx context.Context, appID string, from, to time.Time) ([]SignInRecord, error)
}

// UserSnapshots keeps the latest state of each user.
type UserSnapshots interface {
	// PutUser stores u unless the stored snapshot is newer. A user marked deleted stays deleted.
	PutUser(ctx context.Context, u UserSnapshot) error
	// MarkUserDeleted marks the user deleted, keeping the data of its snapshot. Without a snapshot
	// it stores one with no user data (tenantRef as given), so an older event arriving later cannot
	// bring the user back.
	MarkUserDeleted(ctx context.Context, appID, userID, tenantRef string, at time.Time) error
}

// TenantSnapshots keeps the latest state of each tenant and the days it changed (route 9).
type TenantSnapshots interface {
	// PutTenant stores t unless the stored snapshot is newer, and records the UTC day of t.AsOf as
	// a day the tenant changed (route 9), even when the snapshot itself is older than the stored one.
	PutTenant(ctx context.Context, t TenantSnapshot) error
	// VisitTenants visits the app's tenants changed on a day in the range, ordered by their latest
	// such day, newest first (ties by id, descending), each with its users that are not deleted
	// (ordered by id).
	VisitTenants(ctx context.Context, appID string, from, to time.Time, v Visitor[TenantRecord]) error
}

// Subscriptions keeps each subscription's state and its payments (route 6).
type Subscriptions interface {
	// ApplySubscription stores the change of one subscription (domain.Subscription.Apply over the
	// stored state, under a lock on it) and records its payment, if any, once per key.
	ApplySubscription(ctx context.Context, c domain.SubscriptionChange) error
	// VisitSubscriptions visits the app's subscriptions with a payment in the range, ordered by
	// their latest payment in it, newest first (ties by item id, descending).
	VisitSubscriptions(ctx context.Context, appID string, from, to time.Time, v Visitor[SubscriptionRecord]) error
}

// OneTimePayments keeps the payments for units (route 7).
type OneTimePayments interface {
	// RecordOneTimePayment stores a payment; one whose id is stored already is left as it is.
	RecordOneTimePayment(ctx context.Context, p domain.OneTimePayment) error
	// VisitOneTimePayments visits the app's one-time payments in the range, newest first (ties by
	// id, descending).
	VisitOneTimePayments(ctx context.Context, appID string, from, to time.Time, v Visitor[OneTimePaymentRecord]) error
}

// DailyFacts keeps the facts of the daily series (domain.Fact) and answers the series.
type DailyFacts interface {
	// RecordFact stores f once per (AppID, Kind, Key); recorded again, the stored fact keeps the
	// earlier of the two days and its other fields.
	RecordFact(ctx context.Context, f domain.Fact) error
	// DailySeries answers the app's series over r from one snapshot of the store: sign-ins and
	// active users from the stored sign-ins (by the UTC day of At), the rest from the facts.
	DailySeries(ctx context.Context, appID string, r domain.Range) (*domain.Series, error)
}

// AuditLog keeps each app's audit entries and how long they are kept.
type AuditLog interface {
	// RecordAuditEntry stores e; an entry whose id is stored already is left as it is.
	RecordAuditEntry(ctx context.Context, e domain.AuditEntry) error
	// VisitAuditEntries visits the entries f selects, newest first (ties by id, descending), at
	// most f.Limit of them when it is above 0; Count is told how many it visits.
	VisitAuditEntries(ctx context.Context, f domain.AuditFilter, v Visitor[domain.AuditEntry]) error
	// SetAuditRetention sets how many days the app's entries are kept.
	SetAuditRetention(ctx context.Context, appID string, days int) error
	// AuditRetention is the app's retention in days, domain.DefaultAuditRetentionDays when unset.
	AuditRetention(ctx context.Context, appID string) (int, error)
	// PruneAuditEntries deletes every app's entries older than its retention before now and
	// returns how many it deleted.
	PruneAuditEntries(ctx context.Context, now time.Time) (int, error)
}

// Store is every read model the analytics use cases keep, over one database (or one lock).
type Store interface {
	SignIns
	UserSnapshots
	TenantSnapshots
	Subscriptions
	OneTimePayments
	DailyFacts
	AuditLog
	// Reset empties every read model, for a rebuild from the events. The audit log is not one:
	// it is a record kept longer than the streams keep events, so a rebuild could not bring it
	// back, and it stays as it is.
	Reset(ctx context.Context) error
}

// Visitor receives a list read from one snapshot: Count once with the number of records, then
// Each per record.
type Visitor[T any] struct {
	Count func(n int) error
	Each  func(rec T) error
}

// Payer is the user an item names and that user's current tenant. User is nil when the payer is
// not known (an API key started the checkout) or no event about the user has carried its data yet.
type Payer struct {
	User   *UserSnapshot
	Tenant *TenantSnapshot // the user's current tenant; nil when it has none or it is not known
}

// SubscriptionRecord is a subscription with its payer.
type SubscriptionRecord struct {
	Subscription domain.Subscription
	Payer
}

// OneTimePaymentRecord is a one-time payment with its payer.
type OneTimePaymentRecord struct {
	Payment domain.OneTimePayment
	Payer
}

// TenantRecord is a tenant's snapshot with the snapshots of its users.
type TenantRecord struct {
	Tenant TenantSnapshot
	Users  []UserSnapshot
}
