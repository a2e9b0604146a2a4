package memory

import (
	"context"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// CreateCheckout stores a new session.
func (s *Store) CreateCheckout(_ context.Context, c domain.CheckoutSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkouts[c.ID] = c
	return nil
}

// Checkout returns a session.
func (s *Store) Checkout(_ context.Context, id string) (domain.CheckoutSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.checkouts[id]
	if !ok {
		return domain.CheckoutSession{}, domain.ErrCheckoutNotFound
	}
	return c, nil
}

// SettleCheckout applies fn to the session and its account under the store's lock.
func (s *Store) SettleCheckout(ctx context.Context, id string, fn func(*domain.CheckoutSession, *domain.Account) ([]events.Event, error)) (domain.CheckoutSession, domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.checkouts[id]
	if !ok {
		return domain.CheckoutSession{}, domain.Account{}, domain.ErrCheckoutNotFound
	}
	a, err := s.withAccount(ctx, cs.AppID, cs.TenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&cs, a) })
	if err != nil {
		return domain.CheckoutSession{}, domain.Account{}, err
	}
	s.checkouts[id] = cs
	return cs, a, nil
}
