package memory

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// Store implements app.Store.
type Store struct {
	outbox     *events.MemoryOutbox
	mu         sync.Mutex
	endpoints  map[string]domain.Endpoint // by id
	deliveries map[string]*delivery       // by id
}

type delivery struct {
	d        domain.Delivery
	attempts []domain.Attempt
}

// New returns an empty store whose writes' events go to outbox.
func New(outbox *events.MemoryOutbox) *Store {
	return &Store{outbox: outbox, endpoints: map[string]domain.Endpoint{}, deliveries: map[string]*delivery{}}
}

func copyEndpoint(e domain.Endpoint) domain.Endpoint {
	e.Events = slices.Clone(e.Events)
	e.Secret, e.Previous = bytes.Clone(e.Secret), bytes.Clone(e.Previous)
	return e
}

// CreateEndpoint stores a new endpoint.
func (s *Store) CreateEndpoint(_ context.Context, e domain.Endpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoints[e.ID] = copyEndpoint(e)
	return nil
}

// GetEndpoint returns the app's endpoint.
func (s *Store) GetEndpoint(_ context.Context, appID, id string) (domain.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.endpoints[id]
	if !ok || e.AppID != appID {
		return domain.Endpoint{}, domain.ErrNotFound
	}
	return copyEndpoint(e), nil
}

// EndpointsToDeliver is ListEndpoints: the store's lock already orders a delete against the
// consumer's writes.
func (s *Store) EndpointsToDeliver(ctx context.Context, appID string) ([]domain.Endpoint, error) {
	return s.ListEndpoints(ctx, appID)
}

// ListEndpoints returns the app's endpoints, oldest first.
func (s *Store) ListEndpoints(_ context.Context, appID string) ([]domain.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Endpoint
	for _, e := range s.endpoints {
		if e.AppID == appID {
			out = append(out, copyEndpoint(e))
		}
	}
	slices.SortFunc(out, func(a, b domain.Endpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// UpdateEndpoint runs fn on a copy under the store's lock and keeps the copy and its events when
// fn succeeds.
func (s *Store) UpdateEndpoint(ctx context.Context, appID, id string, fn func(*domain.Endpoint) ([]events.Event, error)) (domain.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.endpoints[id]
	if !ok || e.AppID != appID {
		return domain.Endpoint{}, domain.ErrNotFound
	}
	c := copyEndpoint(e)
	evs, err := fn(&c)
	if err != nil {
		return domain.Endpoint{}, err
	}
	c.ID, c.AppID = id, appID
	s.endpoints[id] = copyEndpoint(c)
	s.outbox.Add(ctx, evs...)
	return c, nil
}

// DeleteEndpoint removes the endpoint and its deliveries.
func (s *Store) DeleteEndpoint(_ context.Context, appID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.endpoints[id]
	if !ok || e.AppID != appID {
		return domain.ErrNotFound
	}
	delete(s.endpoints, id)
	for k, d := range s.deliveries {
		if d.d.EndpointID == id {
			delete(s.deliveries, k)
		}
	}
	return nil
}

// AddDeliveries stores new pending deliveries. The memory inbox runs its handler without a
// transaction to join; a failing handler here has nothing partial to undo, since this is its last
// write.
func (s *Store) AddDeliveries(_ context.Context, ds ...domain.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		d.Body = bytes.Clone(d.Body)
		s.deliveries[d.ID] = &delivery{d: d}
	}
	return nil
}

// ClaimDue leases the due deliveries c asks for.
func (s *Store) ClaimDue(_ context.Context, c app.Claim) ([]domain.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*delivery
	for _, d := range s.deliveries {
		if d.d.Status == domain.StatusPending && !d.d.NextAttemptAt.After(c.Now) && !d.d.LeaseUntil.After(c.Now) &&
			!slices.Contains(c.Skip, d.d.EndpointID) {
			due = append(due, d)
		}
	}
	slices.SortFunc(due, func(a, b *delivery) int {
		if x := a.d.NextAttemptAt.Compare(b.d.NextAttemptAt); x != 0 {
			return x
		}
		return compareStrings(a.d.ID, b.d.ID)
	})
	perEndpoint := map[string]int{}
	var out []domain.Delivery
	for _, d := range due {
		if len(out) == c.Limit {
			break
		}
		if perEndpoint[d.d.EndpointID] == c.PerEndpoint {
			continue
		}
		perEndpoint[d.d.EndpointID]++
		d.d.LeaseUntil = c.Now.Add(c.Lease).Truncate(time.Microsecond)
		cp := d.d
		cp.Body = bytes.Clone(cp.Body)
		out = append(out, cp)
	}
	return out, nil
}

// RecordAttempts stores the attempts and their deliveries' new state and ends their leases.
func (s *Store) RecordAttempts(_ context.Context, rs ...app.Recorded) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		cur, ok := s.deliveries[r.Delivery.ID]
		if !ok {
			continue
		}
		d := r.Delivery
		cur.d.Status, cur.d.Attempts, cur.d.NextAttemptAt = d.Status, d.Attempts, d.NextAttemptAt
		cur.attempts = append(cur.attempts, r.Attempt)
		cur.d.LeaseUntil = time.Time{}
	}
	return nil
}

// RenewLeases moves the leases still held until the times ds carry.
func (s *Store) RenewLeases(_ context.Context, ds []domain.Delivery, until time.Time) ([]domain.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Delivery
	for _, d := range ds {
		cur, ok := s.deliveries[d.ID]
		if !ok || cur.d.Status != domain.StatusPending || cur.d.LeaseUntil.IsZero() || !cur.d.LeaseUntil.Equal(d.LeaseUntil) {
			continue
		}
		cur.d.LeaseUntil = until
		d.LeaseUntil = until
		out = append(out, d)
	}
	return out, nil
}

// ListDeliveries returns the endpoint's newest deliveries with their attempts.
func (s *Store) ListDeliveries(_ context.Context, appID, endpointID string, limit int) ([]app.DeliveryView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []app.DeliveryView
	for _, d := range s.deliveries {
		if d.d.AppID == appID && d.d.EndpointID == endpointID {
			out = append(out, view(d))
		}
	}
	slices.SortFunc(out, func(a, b app.DeliveryView) int {
		if c := b.Delivery.CreatedAt.Compare(a.Delivery.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(b.Delivery.ID, a.Delivery.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// RetryDelivery makes the delivery pending and due at now.
func (s *Store) RetryDelivery(_ context.Context, appID, endpointID, id string, now time.Time) (app.DeliveryView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[id]
	if !ok || d.d.AppID != appID || d.d.EndpointID != endpointID {
		return app.DeliveryView{}, domain.ErrDeliveryNotFound
	}
	d.d.Status, d.d.NextAttemptAt = domain.StatusPending, now
	return view(d), nil
}

// RecoverDeliveries makes the endpoint's failed deliveries since since pending again.
func (s *Store) RecoverDeliveries(_ context.Context, appID, endpointID string, since, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.deliveries {
		if d.d.AppID == appID && d.d.EndpointID == endpointID && d.d.Status == domain.StatusFailed && !d.d.CreatedAt.Before(since) {
			d.d.Status, d.d.Attempts, d.d.NextAttemptAt, d.d.LeaseUntil = domain.StatusPending, 0, now, time.Time{}
			n++
		}
	}
	return n, nil
}

func view(d *delivery) app.DeliveryView {
	cp := d.d
	cp.Body = bytes.Clone(cp.Body)
	return app.DeliveryView{Delivery: cp, Attempts: slices.Clone(d.attempts)}
}
