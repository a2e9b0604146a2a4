package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// Config holds what the use cases depend on.
type Config struct {
	// Store keeps endpoints and deliveries; required.
	Store Store
	// Box seals endpoint secrets; required.
	Box Box
	// Sender makes the HTTP attempts; required to run deliveries (RunDeliveries).
	Sender Sender
	// URLs is which endpoint URLs are accepted.
	URLs domain.URLPolicy
	// TimeScale multiplies the retry schedule (1 in production; tests run it in milliseconds).
	TimeScale float64
	// Clock is time.Now when nil.
	Clock func() time.Time
	// NewID mints endpoint and delivery ids (UUIDs); required.
	NewID func() string
}

// Service runs the outbound use cases. It is safe for concurrent use.
type Service struct {
	store   Store
	box     Box
	sender  Sender
	urls    domain.URLPolicy
	backoff domain.Backoff
	clock   func() time.Time
	newID   func() string
	wake    chan struct{} // a delivery was recorded in this process: claim now, not at the next poll
	lanes   lanes
}

// New checks the configuration and returns the use cases.
func New(c Config) (*Service, error) {
	switch {
	case c.Store == nil:
		return nil, errors.New("outbound: store is required")
	case c.Box == nil:
		return nil, errors.New("outbound: a secret box is required")
	case c.NewID == nil:
		return nil, errors.New("outbound: an id generator is required")
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Service{store: c.Store, box: c.Box, sender: c.Sender, urls: c.URLs, backoff: domain.Backoff{Scale: c.TimeScale},
		clock: clock, newID: c.NewID, wake: make(chan struct{}, 1)}, nil
}

// EndpointView is an endpoint as the routes show it; Secret is set only by Create and Rotate.
type EndpointView struct {
	Endpoint domain.Endpoint
	Secret   string
}

// EndpointInput is the create route's body.
type EndpointInput struct {
	URL         string
	Events      []string
	Description string
}

// CreateEndpoint registers an endpoint for the caller's app and returns it with its new secret,
// the only time the secret is shown.
func (s *Service) CreateEndpoint(ctx context.Context, callerApp, appID string, in EndpointInput) (EndpointView, error) {
	if err := authn.OwnApp(callerApp, appID); err != nil {
		return EndpointView{}, err
	}
	u, err := s.urls.CheckURL("url", strings.TrimSpace(in.URL))
	if err != nil {
		return EndpointView{}, err
	}
	evs, err := domain.CheckEvents("events", in.Events)
	if err != nil {
		return EndpointView{}, err
	}
	desc, err := domain.CheckDescription("description", in.Description)
	if err != nil {
		return EndpointView{}, err
	}
	now := s.now()
	e := domain.Endpoint{ID: s.newID(), AppID: callerApp, URL: u, Events: evs, Description: desc, CreatedAt: now, UpdatedAt: now}
	secret, sealed, err := s.newSecret(e.ID)
	if err != nil {
		return EndpointView{}, err
	}
	e.Secret = sealed
	if err := s.store.CreateEndpoint(ctx, e); err != nil {
		return EndpointView{}, err
	}
	return EndpointView{Endpoint: e, Secret: secret}, nil
}

// ListEndpoints lists the caller's app's endpoints.
func (s *Service) ListEndpoints(ctx context.Context, callerApp, appID string) ([]domain.Endpoint, error) {
	if err := authn.OwnApp(callerApp, appID); err != nil {
		return nil, err
	}
	return s.store.ListEndpoints(ctx, callerApp)
}

// GetEndpoint reads one endpoint of the caller's app.
func (s *Service) GetEndpoint(ctx context.Context, callerApp, appID, id string) (domain.Endpoint, error) {
	if err := ownEndpoint(callerApp, appID, id); err != nil {
		return domain.Endpoint{}, err
	}
	return s.store.GetEndpoint(ctx, callerApp, canonical(id))
}

// EndpointPatch is the update route's body: nil fields stay as they are.
type EndpointPatch struct {
	URL         *string
	Events      []string // replaces the list when non-empty
	Description *string
	Disabled    *bool
}

// UpdateEndpoint changes the fields the patch sends, all validated before any is applied.
func (s *Service) UpdateEndpoint(ctx context.Context, callerApp, appID, id string, p EndpointPatch) (domain.Endpoint, error) {
	if err := ownEndpoint(callerApp, appID, id); err != nil {
		return domain.Endpoint{}, err
	}
	var (
		u, desc string
		evs     []string
		err     error
	)
	if p.URL != nil {
		if u, err = s.urls.CheckURL("url", strings.TrimSpace(*p.URL)); err != nil {
			return domain.Endpoint{}, err
		}
	}
	if len(p.Events) > 0 {
		if evs, err = domain.CheckEvents("events", p.Events); err != nil {
			return domain.Endpoint{}, err
		}
	}
	if p.Description != nil {
		if desc, err = domain.CheckDescription("description", *p.Description); err != nil {
			return domain.Endpoint{}, err
		}
	}
	return s.store.UpdateEndpoint(ctx, callerApp, canonical(id), func(e *domain.Endpoint) ([]events.Event, error) {
		if p.URL != nil {
			e.URL = u
		}
		if evs != nil {
			e.Events = evs
		}
		if p.Description != nil {
			e.Description = desc
		}
		if p.Disabled != nil {
			e.Disabled = *p.Disabled
			if !e.Disabled {
				e.FailingSince = time.Time{} // re-enabled: the five days count from its next failure
			}
		}
		e.UpdatedAt = s.now()
		return nil, nil
	})
}

// DeleteEndpoint removes an endpoint of the caller's app with its deliveries.
func (s *Service) DeleteEndpoint(ctx context.Context, callerApp, appID, id string) error {
	if err := ownEndpoint(callerApp, appID, id); err != nil {
		return err
	}
	return s.store.DeleteEndpoint(ctx, callerApp, canonical(id))
}

// RotateSecret gives the endpoint a new secret, returned this once; the previous one keeps signing
// beside it for domain.RotationOverlap. A second rotation within the overlap drops the oldest.
func (s *Service) RotateSecret(ctx context.Context, callerApp, appID, id string) (EndpointView, error) {
	if err := ownEndpoint(callerApp, appID, id); err != nil {
		return EndpointView{}, err
	}
	id = canonical(id)
	secret, sealed, err := s.newSecret(id)
	if err != nil {
		return EndpointView{}, err
	}
	e, err := s.store.UpdateEndpoint(ctx, callerApp, id, func(e *domain.Endpoint) ([]events.Event, error) {
		now := s.now()
		e.Previous, e.PreviousUntil = e.Secret, now.Add(domain.RotationOverlap)
		e.Secret, e.UpdatedAt = sealed, now
		return nil, nil
	})
	if err != nil {
		return EndpointView{}, err
	}
	return EndpointView{Endpoint: e, Secret: secret}, nil
}

// ListDeliveries lists an endpoint's newest deliveries with their attempts.
func (s *Service) ListDeliveries(ctx context.Context, callerApp, appID, endpointID string) ([]DeliveryView, error) {
	if err := ownEndpoint(callerApp, appID, endpointID); err != nil {
		return nil, err
	}
	endpointID = canonical(endpointID)
	if _, err := s.store.GetEndpoint(ctx, callerApp, endpointID); err != nil {
		return nil, err
	}
	return s.store.ListDeliveries(ctx, callerApp, endpointID, deliveriesShown)
}

// deliveriesShown bounds the deliveries route's list.
const deliveriesShown = 100

// RetryDelivery makes a delivery due now, whatever its state; the same webhook-id is sent again.
func (s *Service) RetryDelivery(ctx context.Context, callerApp, appID, endpointID, deliveryID string) (DeliveryView, error) {
	if err := ownEndpoint(callerApp, appID, endpointID); err != nil {
		return DeliveryView{}, err
	}
	if !isUUID(canonical(deliveryID)) {
		return DeliveryView{}, fault.InvalidField("deliveryId", "must be a UUID")
	}
	v, err := s.store.RetryDelivery(ctx, callerApp, canonical(endpointID), canonical(deliveryID), s.now())
	if err != nil {
		return DeliveryView{}, err
	}
	s.Wake()
	return v, nil
}

// Recovery is the recover route's answer: how many failed deliveries are due again.
type Recovery struct {
	Since      time.Time
	Deliveries int
}

// RecoverDeliveries sends again every failed delivery of the endpoint created at or after since
// (RFC 3339), each on the retry schedule from its start: what a receiver down longer than the
// schedule missed.
func (s *Service) RecoverDeliveries(ctx context.Context, callerApp, appID, endpointID, since string) (Recovery, error) {
	if err := ownEndpoint(callerApp, appID, endpointID); err != nil {
		return Recovery{}, err
	}
	from, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(since))
	if err != nil {
		return Recovery{}, fault.InvalidField("since", "must be an RFC 3339 time such as 2026-11-01T00:00:00Z")
	}
	now := s.now()
	if from.After(now) {
		return Recovery{}, fault.InvalidField("since", "must not be in the future")
	}
	endpointID = canonical(endpointID)
	if _, err := s.store.GetEndpoint(ctx, callerApp, endpointID); err != nil {
		return Recovery{}, err
	}
	n, err := s.store.RecoverDeliveries(ctx, callerApp, endpointID, from.UTC(), now)
	if err != nil {
		return Recovery{}, err
	}
	s.Wake()
	return Recovery{Since: from.UTC(), Deliveries: n}, nil
}

// newSecret returns a fresh secret and its sealed form for endpoint id.
func (s *Service) newSecret(id string) (plain string, sealed []byte, err error) {
	plain, err = domain.NewSecret()
	if err != nil {
		return "", nil, fault.Internal(err)
	}
	sealed, err = s.box.Seal([]byte(plain), id)
	if err != nil {
		return "", nil, fault.Internal(err)
	}
	return plain, sealed, nil
}

// now is the clock in UTC cut to microseconds, the precision Postgres keeps.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }
