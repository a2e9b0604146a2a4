package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/tenant/internal/convert"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Source is the producer name on every event this service emits. The event types are declared
// beside their payload in proto/tenant/v1/events.proto (tenantv1.Event*).
const Source = "tenant"

// Config holds what the use cases depend on.
type Config struct {
	// Store keeps tenants; required.
	Store Store
	// Users lists a tenant's users for the tenant reads (identity's directory).
	Users UserDirectory
	// Clock is time.Now when nil.
	Clock func() time.Time
	// NewID mints tenant and address ids (UUIDv4); required.
	NewID func() string
}

// Service runs the tenant use cases. It is safe for concurrent use.
type Service struct {
	store Store
	users UserDirectory
	clock func() time.Time
	newID func() string
}

// New checks the configuration and returns the use cases.
func New(c Config) (*Service, error) {
	switch {
	case c.Store == nil:
		return nil, errors.New("tenant: store is required")
	case c.NewID == nil:
		return nil, errors.New("tenant: an id generator is required")
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Service{store: c.Store, users: c.Users, clock: clock, newID: c.NewID}, nil
}

// TenantView is a tenant as route 5 shows it: with the users identity lists for it.
type TenantView struct {
	Tenant domain.Tenant
	Users  []*identityv1.TenantUser
}

// GetTenant is route 5.
func (s *Service) GetTenant(ctx context.Context, appID, tenantID string) (TenantView, error) {
	id, err := domain.ParseID("tenantId", tenantID)
	if err != nil {
		return TenantView{}, err
	}
	appID, err = canonicalApp(appID)
	if err != nil {
		return TenantView{}, err
	}
	t, err := s.store.GetTenant(ctx, appID, id)
	if err != nil {
		return TenantView{}, err
	}
	users, err := s.users.TenantUsers(ctx, t.AppID, t.ID)
	if err != nil {
		return TenantView{}, fmt.Errorf("users of tenant %s: %w", t.ID, err)
	}
	return TenantView{Tenant: t, Users: users}, nil
}

// GetTenantRef serves billing, which acts on a tenant a route names: the app's live tenant. A
// deleted tenant is not found: nothing may be bought for it.
func (s *Service) GetTenantRef(ctx context.Context, appID, tenantID string) (domain.Tenant, error) {
	id, err := domain.ParseID("tenantId", tenantID)
	if err != nil {
		return domain.Tenant{}, err
	}
	if appID, err = canonicalApp(appID); err != nil {
		return domain.Tenant{}, err
	}
	t, err := s.store.GetTenant(ctx, appID, id)
	if err != nil {
		return domain.Tenant{}, err
	}
	if t.Deleted {
		return domain.Tenant{}, domain.ErrNotFound
	}
	return t, nil
}

// Credential is the kind of credential route 17 was called with, as far as its rules differ. The
// gRPC adapter derives it from the admitted principal, so the use case knows no transport. The
// zero value is the end user's token, the one with fewer rights.
type Credential int

const (
	// CredentialTenantToken is an end user's tenant access token.
	CredentialTenantToken Credential = iota
	// CredentialWriteKey is a write API key: the app's server.
	CredentialWriteKey
)

// UpdateTenant is route 17. A patch that changes nothing stores nothing and publishes no event.
// The fields domain.Patch.ServerOnlyFields names need a write API key: with a tenant access token
// a patch sending any of them is refused whole (PermissionDenied), nothing applied.
func (s *Service) UpdateTenant(ctx context.Context, appID, tenantID string, body domain.UpdateBody, cred Credential) error {
	id, err := domain.ParseID("tenantId", tenantID)
	if err != nil {
		return err
	}
	patch, err := body.Effective()
	if err != nil {
		return err
	}
	if fields := patch.ServerOnlyFields(body.Prefix()); cred != CredentialWriteKey && len(fields) > 0 {
		return fault.Forbidden("%s can only be changed with a write API key", strings.Join(fields, ", "))
	}
	if appID, err = canonicalApp(appID); err != nil {
		return err
	}
	return s.update(ctx, appID, id, func(t *domain.Tenant) []string {
		return t.Apply(patch, s.clock(), s.newID)
	})
}

// GetMyTenant is GET /v1/tenants/me: the tenant a tenant access token names. A token that names
// no tenant (its user has none yet) has nothing to show: domain.ErrNotFound, like any absent
// tenant. The id comes from identity, not the caller, so a malformed one is not the caller's
// input error either and gets the same answer.
func (s *Service) GetMyTenant(ctx context.Context, appID, tokenTenantID string) (TenantView, error) {
	if !domain.IsUUID(tokenTenantID) {
		return TenantView{}, domain.ErrNotFound
	}
	return s.GetTenant(ctx, appID, tokenTenantID)
}

// UserDeleted applies identity's user.deleted event: when the deleted user was the last one of
// their tenant, the tenant is retired (domain.Tenant.MarkDeleted). A user without a tenant, or a
// tenant with users left, changes nothing; so does a repeated event. domain.ErrNotFound when the
// app holds no such tenant, a *domain.FieldError when the tenant id is not a UUID.
func (s *Service) UserDeleted(ctx context.Context, appID, tenantID string, tenantUsersLeft int32) error {
	if tenantID == "" || tenantUsersLeft > 0 {
		return nil
	}
	id, err := domain.ParseID("tenantRef", tenantID)
	if err != nil {
		return err
	}
	if appID, err = canonicalApp(appID); err != nil {
		return err
	}
	return s.update(ctx, appID, id, func(t *domain.Tenant) []string { return t.MarkDeleted(s.clock()) })
}

// ApplyBillingState stores the billing state billing decided for a tenant, at billing's revision
// rev: the synchronous command after a change and the event of the same change both land here,
// and whichever comes second (or any older revision) changes nothing.
func (s *Service) ApplyBillingState(ctx context.Context, appID, tenantID string, rev int64, b domain.Billing, validThru string) error {
	id, err := domain.ParseID("tenantId", tenantID)
	if err != nil {
		return err
	}
	if appID, err = canonicalApp(appID); err != nil {
		return err
	}
	if rev <= 0 {
		return fault.InvalidField("revision", "must be positive")
	}
	return s.update(ctx, appID, id, func(t *domain.Tenant) []string { return t.ApplyBilling(rev, b, validThru, s.clock()) })
}

// update runs change on the stored tenant and, when it reports changed fields, stores the tenant
// with a tenant.tenant.updated event naming them. A change that changes nothing stores nothing
// and publishes no event.
func (s *Service) update(ctx context.Context, appID, tenantID string, change func(*domain.Tenant) []string) error {
	return s.store.UpdateTenant(ctx, appID, tenantID, func(t *domain.Tenant) ([]events.Event, error) {
		changed := change(t)
		if len(changed) == 0 {
			return nil, nil
		}
		ev, err := changeEvent(tenantv1.EventTenantUpdated, *t, changed)
		if err != nil {
			return nil, err
		}
		return []events.Event{ev}, nil
	})
}

// CreateTenant is the operators' provisioning call, and the sign-up call identity makes for a
// new user (name and app only; everything else takes the same defaults).
func (s *Service) CreateTenant(ctx context.Context, n domain.NewTenant) (domain.Tenant, error) {
	n.ID = s.newID()
	t, err := domain.Create(n, s.clock(), s.newID)
	if err != nil {
		return domain.Tenant{}, err
	}
	ev, err := changeEvent(tenantv1.EventTenantCreated, t, nil)
	if err != nil {
		return domain.Tenant{}, err
	}
	if err := s.store.CreateTenant(ctx, t, ev); err != nil {
		return domain.Tenant{}, err
	}
	return t, nil
}

func changeEvent(eventType eventsv1.Type, t domain.Tenant, changed []string) (events.Event, error) {
	return events.New(Source, eventType, t.AppID, &tenantv1.TenantChanged{
		AppId:         t.AppID,
		TenantId:      t.ID,
		Tenant:        convert.Tenant(t),
		ChangedFields: changed,
	})
}

// canonicalApp canonicalises the app id the adapter took from the admitted caller. Authentication always yields a UUID; anything else
// owns no tenant, which is what the caller is told.
func canonicalApp(appID string) (string, error) {
	id, err := domain.ParseID("appId", appID)
	if err != nil {
		return "", domain.ErrNotFound
	}
	return id, nil
}
