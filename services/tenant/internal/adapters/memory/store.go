package memory

import (
	"context"
	"sync"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// Store implements app.Store.
type Store struct {
	mu      sync.Mutex
	tenants map[string]domain.Tenant // by tenant id
	outbox  *events.MemoryOutbox
}

// New returns an empty store whose events go to outbox.
func New(outbox *events.MemoryOutbox) *Store {
	return &Store{tenants: map[string]domain.Tenant{}, outbox: outbox}
}

// CreateTenant stores t and its events.
func (s *Store) CreateTenant(ctx context.Context, t domain.Tenant, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.tenants[t.ID]; taken {
		return domain.ErrExists
	}
	s.tenants[t.ID] = t.Clone()
	s.outbox.Add(ctx, evs...)
	return nil
}

// GetTenant returns a copy of the app's tenant.
func (s *Store) GetTenant(_ context.Context, appID, tenantID string) (domain.Tenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(appID, tenantID)
	if err != nil {
		return domain.Tenant{}, err
	}
	return t.Clone(), nil
}

// UpdateTenant runs fn on a copy under the store's lock; the copy and the events replace the
// stored tenant only when fn succeeds.
func (s *Store) UpdateTenant(ctx context.Context, appID, tenantID string, fn func(*domain.Tenant) ([]events.Event, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookup(appID, tenantID)
	if err != nil {
		return err
	}
	next := t.Clone()
	evs, err := fn(&next)
	if err != nil {
		return err
	}
	s.tenants[tenantID] = next.Clone()
	s.outbox.Add(ctx, evs...)
	return nil
}

func (s *Store) lookup(appID, tenantID string) (domain.Tenant, error) {
	t, ok := s.tenants[tenantID]
	if !ok || t.AppID != appID {
		return domain.Tenant{}, domain.ErrNotFound
	}
	return t, nil
}
