package app

import (
	"context"
	"errors"

	"github.com/berthhq/berth/services/identity/internal/domain"
)

// ProviderInput is an operator's configuration of one identity-provider slot. ClientSecret ""
// keeps the slot's stored secret (none for a public client).
type ProviderInput struct {
	Slot         string
	Settings     domain.ProviderSettings
	ClientSecret string
}

// SetAppIdentityProvider configures one of the app's slots, replacing what it held, and returns the
// app's slots. The client secret is sealed for the slot before it is stored and is never returned.
// No event: nothing outside identity uses the slots, and the hosted pages ask for them on every
// request.
func (s *Service) SetAppIdentityProvider(ctx context.Context, appID string, in ProviderInput) ([]domain.IdentityProvider, error) {
	appID = domain.CanonicalID(appID)
	a, err := s.GetApp(ctx, appID)
	if err != nil {
		return nil, err
	}
	p, err := domain.NewIdentityProvider(a.ID, in.Slot, in.Settings, s.now())
	if err != nil {
		return nil, err
	}
	if err := domain.CheckClientSecret(in.ClientSecret); err != nil {
		return nil, err
	}
	if in.ClientSecret != "" {
		if p.SealedSecret, err = s.box.Seal([]byte(in.ClientSecret), domain.ProviderSecretOwner(a.ID, p.Slot)); err != nil {
			return nil, err
		}
	} else {
		old, err := s.store.GetIdentityProvider(ctx, a.ID, p.Slot)
		switch {
		case err == nil:
			p.SealedSecret = old.SealedSecret
		case !errors.Is(err, domain.ErrNotFound):
			return nil, err
		}
	}
	if err := s.store.PutIdentityProvider(ctx, p); err != nil {
		return nil, err
	}
	return s.store.ListIdentityProviders(ctx, a.ID)
}

// ClearAppIdentityProvider empties one of the app's slots (an empty slot stays empty) and returns
// the app's slots. The links the slot made stay (ProviderLinks).
func (s *Service) ClearAppIdentityProvider(ctx context.Context, appID, slot string) ([]domain.IdentityProvider, error) {
	a, err := s.GetApp(ctx, appID)
	if err != nil {
		return nil, err
	}
	if !domain.IsProviderSlot(slot) {
		return nil, domain.ErrBadSlot
	}
	if err := s.store.DeleteIdentityProvider(ctx, a.ID, slot); err != nil {
		return nil, err
	}
	return s.store.ListIdentityProviders(ctx, a.ID)
}

// ListAppIdentityProviders returns the app's configured slots in slot order.
func (s *Service) ListAppIdentityProviders(ctx context.Context, appID string) ([]domain.IdentityProvider, error) {
	a, err := s.GetApp(ctx, appID)
	if err != nil {
		return nil, err
	}
	return s.store.ListIdentityProviders(ctx, a.ID)
}
