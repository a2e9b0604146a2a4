package app

import (
	"context"
	"errors"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/authn/apikey"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Service is identity's own key verifier (other services reach it through VerifyApiKey).
var _ authn.KeyVerifier = (*Service)(nil)

// errBadKey is the one answer for every kind of wrong key, so a caller cannot tell an unknown key
// id from a wrong secret or a key of another app.
func errBadKey() error { return fault.Unauthenticated("invalid API key") }

// VerifyAPIKey checks a presented key against the stored hash (in constant time) and that it belongs
// to clientID's app. It does not look at the claimed type: the access policy compares that with the
// stored type it returns.
func (s *Service) VerifyAPIKey(ctx context.Context, full, clientID string) (authn.VerifiedKey, error) {
	clientID = domain.CanonicalID(clientID)
	id, secret, ok := apikey.Parse(full)
	if !ok {
		return authn.VerifiedKey{}, errBadKey()
	}
	k, err := s.store.GetAPIKey(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return authn.VerifiedKey{}, errBadKey()
	}
	if err != nil {
		return authn.VerifiedKey{}, fault.Internal(err)
	}
	if !apikey.Matches(s.pepper, secret, k.Hash) || k.AppID != clientID || k.RevokedAt != nil {
		return authn.VerifiedKey{}, errBadKey()
	}
	a, err := s.store.GetApp(ctx, k.AppID)
	if err != nil {
		return authn.VerifiedKey{}, fault.Internal(err)
	}
	return authn.VerifiedKey{KeyID: k.ID, AppID: a.ID, ProjectID: a.ProjectID, Type: string(k.Type), AppEnabled: a.Enabled}, nil
}

// CreateAPIKey mints a key for an app. The full key is returned once; only its id and the HMAC of
// its secret are stored.
func (s *Service) CreateAPIKey(ctx context.Context, appID, keyType, name, description string) (domain.APIKey, string, error) {
	appID = domain.CanonicalID(appID)
	typ, err := domain.ParseKeyType(keyType)
	if err != nil {
		return domain.APIKey{}, "", err
	}
	if _, err := s.store.GetApp(ctx, appID); err != nil {
		return domain.APIKey{}, "", err
	}
	id, secret, full, err := apikey.Generate()
	if err != nil {
		return domain.APIKey{}, "", err
	}
	k, err := domain.NewAPIKey(id, appID, typ, name, description, apikey.Hash(s.pepper, secret), s.now())
	if err != nil {
		return domain.APIKey{}, "", err
	}
	evs, err := event(identityv1.EventAPIKeyChanged, appID, &identityv1.ApiKeyChanged{AppId: appID, KeyId: id})
	if err != nil {
		return domain.APIKey{}, "", err
	}
	if err := s.store.CreateAPIKey(ctx, k, evs...); err != nil {
		return domain.APIKey{}, "", err
	}
	return k, full, nil
}
