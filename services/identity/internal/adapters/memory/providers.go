package memory

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func providerKey(appID, slot string) string { return appID + "/" + slot }

func linkKey(appID, slot, subject string) string { return appID + "/" + slot + "/" + subject }

func cloneProvider(p domain.IdentityProvider) domain.IdentityProvider {
	p.SealedSecret = bytes.Clone(p.SealedSecret)
	p.Scopes = slices.Clone(p.Scopes)
	p.AllowedDomains = slices.Clone(p.AllowedDomains)
	return p
}

// PutIdentityProvider implements app.IdentityProviders.
func (s *Store) PutIdentityProvider(_ context.Context, p domain.IdentityProvider) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[p.AppID]; !ok {
		return domain.NotFound("app")
	}
	k := providerKey(p.AppID, p.Slot)
	if old, ok := s.providers[k]; ok {
		p.CreatedAt = old.CreatedAt
	}
	s.providers[k] = cloneProvider(p)
	return nil
}

// GetIdentityProvider implements app.IdentityProviders.
func (s *Store) GetIdentityProvider(_ context.Context, appID, slot string) (domain.IdentityProvider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.providers[providerKey(appID, slot)]
	if !ok {
		return domain.IdentityProvider{}, domain.NotFound("identity provider")
	}
	return cloneProvider(p), nil
}

// ListIdentityProviders implements app.IdentityProviders.
func (s *Store) ListIdentityProviders(_ context.Context, appID string) ([]domain.IdentityProvider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.IdentityProvider
	for _, slot := range domain.ProviderSlots {
		if p, ok := s.providers[providerKey(appID, slot)]; ok {
			out = append(out, cloneProvider(p))
		}
	}
	return out, nil
}

// DeleteIdentityProvider implements app.IdentityProviders.
func (s *Store) DeleteIdentityProvider(_ context.Context, appID, slot string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.providers, providerKey(appID, slot))
	return nil
}

// CreateProviderLink implements app.ProviderLinks.
func (s *Store) CreateProviderLink(ctx context.Context, l domain.ProviderLink, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[l.UserID]; !ok || u.AppID != l.AppID {
		return domain.NotFound("user")
	}
	if err := s.linkFree(l); err != nil {
		return err
	}
	s.links[linkKey(l.AppID, l.Slot, l.Subject)] = l
	s.outbox.Add(ctx, evs...)
	return nil
}

// CreateLinkedUser implements app.ProviderLinks.
func (s *Store) CreateLinkedUser(ctx context.Context, u domain.User, l domain.ProviderLink, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[u.AppID]; !ok {
		return domain.NotFound("app")
	}
	if !u.Deleted && s.emailUsed(u.AppID, u.Email, u.ID) {
		return domain.ErrEmailTaken
	}
	if err := s.linkFree(l); err != nil {
		return err
	}
	s.users[u.ID] = cloneUser(u)
	s.links[linkKey(l.AppID, l.Slot, l.Subject)] = l
	s.outbox.Add(ctx, evs...)
	return nil
}

// linkFree answers domain.ErrProviderLinked when the provider identity or the user's slot is
// linked already. The caller holds the lock.
func (s *Store) linkFree(l domain.ProviderLink) error {
	if _, ok := s.links[linkKey(l.AppID, l.Slot, l.Subject)]; ok {
		return domain.ErrProviderLinked
	}
	for _, other := range s.links {
		if other.AppID == l.AppID && other.UserID == l.UserID && other.Slot == l.Slot {
			return domain.ErrProviderLinked
		}
	}
	return nil
}

// GetProviderLink implements app.ProviderLinks.
func (s *Store) GetProviderLink(_ context.Context, appID, slot, subject string) (domain.ProviderLink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[linkKey(appID, slot, subject)]
	if !ok {
		return domain.ProviderLink{}, domain.NotFound("provider link")
	}
	return l, nil
}

// ListProviderLinks implements app.ProviderLinks.
func (s *Store) ListProviderLinks(_ context.Context, appID, userID string) ([]domain.ProviderLink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.ProviderLink
	for _, l := range s.links {
		if l.AppID == appID && l.UserID == userID {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b domain.ProviderLink) int { return strings.Compare(a.Slot, b.Slot) })
	return out, nil
}
