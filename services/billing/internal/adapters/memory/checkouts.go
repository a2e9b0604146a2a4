package memory

import (
	"context"
	"slices"
	"strings"
	"time"

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

// TenantCheckouts lists the tenant's sessions, newest first.
func (s *Store) TenantCheckouts(_ context.Context, appID, tenantID string, limit int) ([]domain.CheckoutSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.CheckoutSession
	for _, c := range s.checkouts {
		if c.AppID == appID && c.TenantID == tenantID {
			out = append(out, c)
		}
	}
	return newestFirst(out, func(c domain.CheckoutSession) (time.Time, string) { return c.CreatedAt, c.ID }, limit), nil
}

// newestFirst sorts xs by creation time and id, newest first, and keeps the first limit.
func newestFirst[T any](xs []T, key func(T) (time.Time, string), limit int) []T {
	slices.SortFunc(xs, func(a, b T) int {
		at, aid := key(a)
		bt, bid := key(b)
		if c := bt.Compare(at); c != 0 {
			return c
		}
		return strings.Compare(bid, aid)
	})
	return xs[:min(limit, len(xs))]
}
