package memory

import (
	"context"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Account returns the tenant's account, the zero account when none is stored.
func (s *Store) Account(_ context.Context, appID, tenantID string) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accountOf(appID, tenantID), nil
}

func (s *Store) accountOf(appID, tenantID string) domain.Account {
	if a, ok := s.accounts[[2]string{appID, tenantID}]; ok {
		return a
	}
	return domain.Account{AppID: appID, TenantID: tenantID}
}

// withAccount runs fn on a copy of the tenant's account and stores the copy and fn's events
// when fn succeeds. The caller holds the store's lock.
func (s *Store) withAccount(ctx context.Context, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error) {
	a := s.accountOf(appID, tenantID)
	evs, err := fn(&a)
	if err != nil {
		return domain.Account{}, err
	}
	s.accounts[[2]string{a.AppID, a.TenantID}] = a
	s.outbox.Add(ctx, evs...)
	return a, nil
}

// UpdateAccount changes a tenant's account under the store's lock.
func (s *Store) UpdateAccount(ctx context.Context, appID, tenantID string, fn func(*domain.Account) ([]events.Event, error)) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withAccount(ctx, appID, tenantID, fn)
}
