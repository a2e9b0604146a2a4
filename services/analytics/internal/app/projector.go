package app

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// IdentityEvents and TenantEvents are the types the projector applies, per publishing context: a
// durable consumer reads one context's stream, so each list feeds one consumer.
var (
	IdentityEvents = []eventsv1.Type{
		identityv1.EventUserSignedIn, identityv1.EventUserUpdated, identityv1.EventUserFrozen,
		identityv1.EventUserUnfrozen, identityv1.EventUserDeleted,
	}
	TenantEvents = []eventsv1.Type{tenantv1.EventTenantCreated, tenantv1.EventTenantUpdated}
)

// ErrMalformed marks an event that can never be applied; the consumer acknowledges it instead of
// redelivering it (see events.ErrMalformed).
var ErrMalformed = events.ErrMalformed

// Projector applies events to the read models.
type Projector struct {
	store Store
}

// NewProjector returns a projector writing to store.
func NewProjector(store Store) *Projector { return &Projector{store: store} }

// Apply applies one event. Applying an event again changes nothing: sign-ins are keyed by event id
// and snapshots never move back in time. Errors wrap ErrMalformed when the event is unusable.
func (p *Projector) Apply(ctx context.Context, ev events.Event) error {
	// Snapshot order is decided by event time, kept to the microsecond like every stored time.
	asOf := ev.Time.UTC().Truncate(time.Microsecond)
	switch ev.Type {
	case identityv1.EventUserSignedIn:
		var m identityv1.UserSignedIn
		if err := decode(ev, &m); err != nil {
			return err
		}
		return p.signedIn(ctx, ev, &m, asOf)
	case identityv1.EventUserUpdated, identityv1.EventUserFrozen, identityv1.EventUserUnfrozen:
		var m identityv1.UserChanged
		if err := decode(ev, &m); err != nil {
			return err
		}
		if m.GetUser() == nil {
			return malformed(ev, "carries no user")
		}
		appID, userID, tenantRef, err := userIDs(ev, m.GetAppId(), m.GetUserId(), m.GetTenantRef())
		if err != nil {
			return err
		}
		return p.store.PutUser(ctx, UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantRef, AsOf: asOf, User: m.GetUser()})
	case identityv1.EventUserDeleted:
		var m identityv1.UserDeleted
		if err := decode(ev, &m); err != nil {
			return err
		}
		appID, userID, tenantRef, err := userIDs(ev, m.GetAppId(), m.GetUserId(), m.GetTenantRef())
		if err != nil {
			return err
		}
		return p.store.MarkUserDeleted(ctx, appID, userID, tenantRef, asOf)
	case tenantv1.EventTenantCreated, tenantv1.EventTenantUpdated:
		var m tenantv1.TenantChanged
		if err := decode(ev, &m); err != nil {
			return err
		}
		if m.GetTenant() == nil {
			return malformed(ev, "carries no tenant")
		}
		appID, err := eventApp(ev, m.GetAppId())
		if err != nil {
			return err
		}
		tenantID, err := canonicalID(ev, "tenantId", m.GetTenantId())
		if err != nil {
			return err
		}
		return p.store.PutTenant(ctx, TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: asOf, Tenant: m.GetTenant()})
	}
	return malformed(ev, "is not a type analytics applies")
}

// signedIn records the sign-in and refreshes the user's snapshot from the state it carries.
func (p *Projector) signedIn(ctx context.Context, ev events.Event, m *identityv1.UserSignedIn, asOf time.Time) error {
	appID, userID, tenantRef, err := userIDs(ev, m.GetAppId(), m.GetUserId(), m.GetTenantRef())
	if err != nil {
		return err
	}
	id, err := canonicalID(ev, "id", ev.ID) // the bus accepts any UUID spelling; stores key on one
	if err != nil {
		return err
	}
	at := asOf // identity stamps the event when the sign-in happens; "at" is the precise time when present
	if m.GetAt() != "" {
		parsed, err := time.Parse(time.RFC3339Nano, m.GetAt())
		if err != nil {
			return malformed(ev, "has an at that is not RFC 3339")
		}
		at = parsed.UTC().Truncate(time.Microsecond)
	}
	signIn := domain.SignIn{ID: id, AppID: appID, UserID: userID, TenantRef: tenantRef, At: at, IP: m.GetIp()}
	if err := p.store.RecordSignIn(ctx, signIn); err != nil {
		return fmt.Errorf("record sign-in %s: %w", ev.ID, err)
	}
	if m.GetUser() == nil {
		return nil // the sign-in is what counts; the snapshot stays as the last event that carried one left it
	}
	return p.store.PutUser(ctx, UserSnapshot{
		AppID: appID, UserID: userID, TenantRef: tenantRef, AsOf: asOf, User: m.GetUser(),
	})
}

// userIDs canonicalises the ids every user event carries; the tenant reference may be empty.
func userIDs(ev events.Event, appID, userID, tenantRef string) (app, user, tenant string, err error) {
	if app, err = eventApp(ev, appID); err != nil {
		return "", "", "", err
	}
	if user, err = canonicalID(ev, "userId", userID); err != nil {
		return "", "", "", err
	}
	if tenantRef != "" {
		if tenant, err = canonicalID(ev, "tenantRef", tenantRef); err != nil {
			return "", "", "", err
		}
	}
	return app, user, tenant, nil
}

// eventApp is the payload's app id, or the envelope's when the payload leaves it out.
func eventApp(ev events.Event, payloadApp string) (string, error) {
	if payloadApp == "" {
		payloadApp = ev.AppID
	}
	return canonicalID(ev, "appId", payloadApp)
}

func canonicalID(ev events.Event, field, s string) (string, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return "", malformed(ev, "has a "+field+" that is not a UUID")
	}
	return id.String(), nil
}

func decode(ev events.Event, into proto.Message) error {
	if err := ev.Decode(into); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}

func malformed(ev events.Event, reason string) error {
	return fmt.Errorf("%w: %s %s %s", ErrMalformed, ev.Type, ev.ID, reason)
}
