package memory

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// CreateCharge stores c, refusing a second open upgrade of one subscription and a second open
// subscription charge of one tenant.
func (s *Store) CreateCharge(_ context.Context, c domain.Charge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Kind == domain.ChargeUpgrade {
		if _, ok := s.openUpgrade(c.SubscriptionID); ok {
			return domain.ErrChargePending
		}
	}
	if c.Kind == domain.ChargeSubscription {
		for _, o := range s.charges {
			if o.Kind == domain.ChargeSubscription && o.Status == domain.ChargeOpen && o.TenantID == c.TenantID {
				return domain.ErrSubscriptionPending
			}
		}
	}
	s.charges[c.ID] = c
	return nil
}

// Charge returns a charge.
func (s *Store) Charge(_ context.Context, id string) (domain.Charge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.charges[id]; ok {
		return c, nil
	}
	return domain.Charge{}, domain.ErrChargeNotFound
}

// OpenUpgrade returns the subscription's open upgrade.
func (s *Store) OpenUpgrade(_ context.Context, subscriptionID string) (domain.Charge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.openUpgrade(subscriptionID); ok {
		return c, nil
	}
	return domain.Charge{}, domain.ErrChargeNotFound
}

func (s *Store) openUpgrade(subscriptionID string) (domain.Charge, bool) {
	for _, c := range s.charges {
		if c.Kind == domain.ChargeUpgrade && c.Status == domain.ChargeOpen && c.SubscriptionID == subscriptionID {
			return c, true
		}
	}
	return domain.Charge{}, false
}

// SettleCharge applies fn to the charge and its account under the store's lock.
func (s *Store) SettleCharge(ctx context.Context, id string, fn func(*domain.Charge, *domain.Account) ([]events.Event, error)) (domain.Charge, domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.charges[id]
	if !ok {
		return domain.Charge{}, domain.Account{}, domain.ErrChargeNotFound
	}
	a, err := s.withAccount(ctx, c.AppID, c.TenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&c, a) })
	if err != nil {
		return domain.Charge{}, domain.Account{}, err
	}
	s.charges[id] = c
	return c, a, nil
}

// TenantCharges lists the tenant's charges, newest first.
func (s *Store) TenantCharges(_ context.Context, appID, tenantID string, limit int) ([]domain.Charge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Charge
	for _, c := range s.charges {
		if c.AppID == appID && c.TenantID == tenantID {
			out = append(out, c)
		}
	}
	return newestFirst(out, func(c domain.Charge) (time.Time, string) { return c.CreatedAt, c.ID }, limit), nil
}
