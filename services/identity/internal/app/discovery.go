package app

import (
	"context"

	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/token"
)

// Discovery is an app's OpenID discovery document.
type Discovery struct {
	Issuer, AuthorizationEndpoint, TokenEndpoint, JWKSURI string
	ResponseTypes, SubjectTypes, SigningAlgs              []string
	GrantTypes, Scopes, Claims                            []string
}

// discoveryClaims are the claims the tokens carry (see internal/token).
var discoveryClaims = []string{
	"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "jti", "tenantId", "lng", "scope", "psc", "token_use", "sid",
	"name", "given_name", "family_name", "middle_name", "nickname", "preferred_username", "profile", "picture",
	"website", "email", "email_verified", "gender", "birthdate", "zoneinfo", "locale", "phone_number",
	"phone_number_verified", "updated_at",
}

// OpenIDConfiguration is the discovery document of an app; unknown apps are not found.
func (s *Service) OpenIDConfiguration(ctx context.Context, appID string) (Discovery, error) {
	a, err := s.store.GetApp(ctx, domain.CanonicalID(appID))
	if err != nil {
		return Discovery{}, err
	}
	return Discovery{
		Issuer:                s.issuer,
		AuthorizationEndpoint: s.publicURL + "/login",
		TokenEndpoint:         s.publicURL + "/api/v1/tokens",
		JWKSURI:               s.publicURL + "/apps/" + a.ID + "/.well-known/jwks.json",
		ResponseTypes:         []string{"code"},
		SubjectTypes:          []string{"public"},
		SigningAlgs:           []string{"RS256"},
		GrantTypes:            []string{GrantAuthorizationCode, "refresh_token"},
		Scopes:                []string{"openid", "profile", "email"},
		Claims:                discoveryClaims,
	}, nil
}

// JWKS is the app's current signing key as a JWK (a rotated key is not listed: its tokens no
// longer verify anyway).
func (s *Service) JWKS(ctx context.Context, appID string) (token.JWK, error) {
	a, err := s.store.GetApp(ctx, domain.CanonicalID(appID))
	if err != nil {
		return token.JWK{}, err
	}
	pub, err := publicKey(a)
	if err != nil {
		return token.JWK{}, err
	}
	return token.PublicJWK(pub), nil
}
