package grpcapi

import (
	"context"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// InternalServer implements the service-to-service API.
type InternalServer struct {
	identityv1.UnimplementedIdentityInternalServiceServer
	svc *app.Service
}

// VerifyApiKey checks a key for another service's access policy. The claimed type in the request is
// not compared here: the caller's policy compares it with the stored type returned.
func (s *InternalServer) VerifyApiKey(ctx context.Context, req *identityv1.VerifyApiKeyRequest) (*identityv1.VerifiedApiKey, error) {
	vk, err := s.svc.VerifyAPIKey(ctx, req.GetApiKey(), req.GetClientId())
	if err != nil {
		return nil, err
	}
	return &identityv1.VerifiedApiKey{KeyId: vk.KeyID, AppId: vk.AppID, ProjectId: vk.ProjectID, Type: vk.Type, AppEnabled: vk.AppEnabled}, nil
}

// ListTenantUsers returns a tenant's live users for the tenant service's reads.
func (s *InternalServer) ListTenantUsers(ctx context.Context, req *identityv1.ListTenantUsersRequest) (*identityv1.TenantUserList, error) {
	users, err := s.svc.ListTenantUsers(ctx, req.GetAppId(), req.GetTenantId())
	if err != nil {
		return nil, err
	}
	out := &identityv1.TenantUserList{Users: make([]*identityv1.TenantUser, 0, len(users))}
	for _, u := range users {
		out.Users = append(out.Users, convert.TenantUser(u))
	}
	return out, nil
}

// GetUserRef names a user's tenant for another context.
func (s *InternalServer) GetUserRef(ctx context.Context, req *identityv1.GetUserRefRequest) (*identityv1.UserRef, error) {
	u, err := s.svc.GetUserRef(ctx, req.GetAppId(), req.GetUserId())
	if err != nil {
		return nil, err
	}
	return userRef(u), nil
}

// GetTenantReferrer names the user who referred a tenant, for billing's referral reward.
func (s *InternalServer) GetTenantReferrer(ctx context.Context, req *identityv1.GetTenantReferrerRequest) (*identityv1.UserRef, error) {
	u, err := s.svc.GetTenantReferrer(ctx, req.GetAppId(), req.GetTenantId())
	if err != nil {
		return nil, err
	}
	return userRef(u), nil
}

// ListWebOrigins lists every origin some app allows (the edge's CORS on error answers).
func (s *InternalServer) ListWebOrigins(ctx context.Context, _ *identityv1.ListWebOriginsRequest) (*identityv1.WebOrigins, error) {
	origins, err := s.svc.ListWebOrigins(ctx)
	if err != nil {
		return nil, err
	}
	return &identityv1.WebOrigins{Origins: origins}, nil
}

func userRef(u domain.User) *identityv1.UserRef {
	return &identityv1.UserRef{UserId: u.ID, TenantRef: u.TenantID, Freezed: u.Frozen, Email: u.Email}
}

// GetAppRef names an enabled app for another context.
func (s *InternalServer) GetAppRef(ctx context.Context, req *identityv1.GetAppRefRequest) (*identityv1.AppRef, error) {
	a, err := s.svc.GetAppRef(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	out := &identityv1.AppRef{AppId: a.ID, Name: a.Name}
	if len(a.RedirectURIs) > 0 {
		out.FirstRedirectUri = a.RedirectURIs[0]
	}
	return out, nil
}

// VerifyAccessToken checks a tenant access token for another service's access policy.
func (s *InternalServer) VerifyAccessToken(ctx context.Context, req *identityv1.VerifyAccessTokenRequest) (*identityv1.VerifiedAccessToken, error) {
	v, err := s.svc.VerifyToken(ctx, req.GetAccessToken())
	if err != nil {
		return nil, err
	}
	return &identityv1.VerifiedAccessToken{
		AppId: v.AppID, TenantId: v.TenantID, UserId: v.UserID, TokenId: v.TokenID, ExpiresAt: v.ExpiresAt.Unix(),
		WebOrigins: v.WebOrigins,
	}, nil
}

// VerifyOperatorToken checks a project member's operator token for another service's policy.
func (s *InternalServer) VerifyOperatorToken(ctx context.Context, req *identityv1.VerifyOperatorTokenRequest) (*identityv1.VerifiedOperatorToken, error) {
	p, err := s.svc.VerifyOperatorToken(ctx, req.GetOperatorToken())
	if err != nil {
		return nil, err
	}
	return &identityv1.VerifiedOperatorToken{MemberId: p.UserID, ProjectId: p.ProjectID}, nil
}

// GetAppProject names the project that owns an app, for another service's operator routes.
func (s *InternalServer) GetAppProject(ctx context.Context, req *identityv1.GetAppProjectRequest) (*identityv1.AppProject, error) {
	a, err := s.svc.GetAppProject(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return &identityv1.AppProject{AppId: a.ID, ProjectId: a.ProjectID}, nil
}
