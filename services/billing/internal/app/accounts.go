package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// changeState applies an effect to an account its store transaction holds locked: the account
// moves to its next revision and the billing.tenant.changed event, committed with it, says why.
func changeState(a *domain.Account, now time.Time, reason string, apply func(*domain.State)) ([]events.Event, error) {
	apply(&a.State)
	a.Touch(now)
	ev, err := stateEvent(*a, reason)
	if err != nil {
		return nil, err
	}
	return []events.Event{ev}, nil
}

// updateAccount applies an effect to a tenant's account unless needed reports, on the locked
// account, that it holds already (a repeated request changes nothing and emits nothing), and
// hands a changed account to the tenant context before answering.
func (s *Service) updateAccount(ctx context.Context, appID, tenantID, reason string, needed func(domain.State) bool, apply func(*domain.State)) error {
	changed := false
	acct, err := s.store.UpdateAccount(ctx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) {
		if !needed(a.State) {
			return nil, nil
		}
		changed = true
		return changeState(a, s.now(), reason, apply)
	})
	if err != nil || !changed {
		return err
	}
	return s.publish(ctx, acct)
}
