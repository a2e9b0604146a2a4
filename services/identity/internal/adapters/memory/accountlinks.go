package memory

import (
	"context"
	"slices"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// userLinks returns the user's links in slot order; the caller holds the lock.
func (s *Store) userLinks(appID, userID string) []domain.ProviderLink {
	var out []domain.ProviderLink
	for _, slot := range domain.ProviderSlots {
		for _, l := range s.links {
			if l.AppID == appID && l.UserID == userID && l.Slot == slot {
				out = append(out, l)
			}
		}
	}
	return out
}

// DeleteProviderLink implements app.ProviderLinks.
func (s *Store) DeleteProviderLink(ctx context.Context, appID, userID, slot string, fn func(*domain.User, domain.ProviderLink, []domain.ProviderLink, []domain.Factor) ([]events.Event, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userExists(appID, userID) {
		return domain.NotFound("user")
	}
	links := s.userLinks(appID, userID)
	i := slices.IndexFunc(links, func(l domain.ProviderLink) bool { return l.Slot == slot })
	if i < 0 {
		return domain.NotFound("provider link")
	}
	removed := links[i]
	left := slices.Delete(slices.Clone(links), i, i+1)
	factors := s.userFactors(appID, userID)
	next, evs, err := s.changedUser(appID, userID, func(u *domain.User) ([]events.Event, error) { return fn(u, removed, left, factors) })
	if err != nil {
		return err
	}
	s.users[userID] = cloneUser(next)
	delete(s.links, linkKey(removed.AppID, removed.Slot, removed.Subject))
	s.outbox.Add(ctx, evs...)
	return nil
}

// RemoveFactor implements app.Factors.
func (s *Store) RemoveFactor(ctx context.Context, appID, userID, id string, fn func(domain.User, domain.Factor, []domain.Factor, []domain.ProviderLink) ([]events.Event, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[userID]
	if !ok || u.AppID != appID {
		return domain.NotFound("user")
	}
	factors := s.userFactors(appID, userID)
	i := slices.IndexFunc(factors, func(f domain.Factor) bool { return f.ID == id && f.Confirmed() })
	if i < 0 {
		return domain.NotFound("second factor")
	}
	removed := factors[i]
	left := slices.Delete(factors, i, i+1)
	evs, err := fn(cloneUser(u), removed, left, s.userLinks(appID, userID))
	if err != nil {
		return err
	}
	delete(s.factors, id)
	if !slices.ContainsFunc(left, domain.Factor.Confirmed) {
		delete(s.recovery, userID)
	}
	s.outbox.Add(ctx, evs...)
	return nil
}
