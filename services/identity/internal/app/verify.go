package app

import (
	"context"
	"errors"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/token"
)

// Service is identity's own tenant-token verifier (other services reach it through
// VerifyAccessToken on the internal API).
var _ authn.TokenVerifier = (*Service)(nil)

// Service answers the access policy's CORS question for route 1, where the request names the app.
var _ authn.OriginSource = (*Service)(nil)

// VerifiedToken is what a valid access token stands for.
type VerifiedToken struct {
	token.Verified
	ProjectID string
	// WebOrigins are the app's allowed browser origins, answered with the verification so that
	// the caller's access policy can decide CORS from its cache.
	WebOrigins []string
}

func errBadToken() error { return fault.Unauthenticated("invalid access token") }

// VerifyToken checks an access token: RS256 signature with the CURRENT key of the app named by
// its aud (so rotating the key logs everyone out), issuer, audience, expiry, and that it is an
// access token. A valid token of a disabled app, or of a user who is frozen or deleted, is
// PermissionDenied; everything else wrong is Unauthenticated.
func (s *Service) VerifyToken(ctx context.Context, raw string) (VerifiedToken, error) {
	aud, err := token.Audience(raw)
	if err != nil || !domain.IsUUID(aud) {
		return VerifiedToken{}, errBadToken()
	}
	a, err := s.store.GetApp(ctx, aud)
	if errors.Is(err, domain.ErrNotFound) {
		return VerifiedToken{}, errBadToken()
	}
	if err != nil {
		return VerifiedToken{}, fault.Internal(err)
	}
	pub, err := publicKey(a)
	if err != nil {
		return VerifiedToken{}, fault.Internal(err)
	}
	v, err := token.VerifyAccess(raw, s.issuer, a.ID, pub, s.clock)
	if err != nil {
		return VerifiedToken{}, errBadToken()
	}
	if !a.Enabled {
		return VerifiedToken{}, fault.Forbidden("App Is Disabled")
	}
	u, err := s.store.GetUser(ctx, a.ID, v.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return VerifiedToken{}, errBadToken()
	}
	if err != nil {
		return VerifiedToken{}, fault.Internal(err)
	}
	if u.TenantID != v.TenantID {
		return VerifiedToken{}, errBadToken()
	}
	if err := inactive(u); err != nil {
		return VerifiedToken{}, err
	}
	return VerifiedToken{Verified: v, ProjectID: a.ProjectID, WebOrigins: a.WebOrigins()}, nil
}

// VerifyAccessToken implements authn.TokenVerifier for identity's own access policy.
func (s *Service) VerifyAccessToken(ctx context.Context, raw string) (authn.Principal, error) {
	v, err := s.VerifyToken(ctx, raw)
	if err != nil {
		return authn.Principal{}, err
	}
	return authn.Principal{Kind: authn.KindTenantToken, AppID: v.AppID, ProjectID: v.ProjectID, TenantID: v.TenantID, UserID: v.UserID, SessionID: v.SessionID, WebOrigins: v.WebOrigins}, nil
}
