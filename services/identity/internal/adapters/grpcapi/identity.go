package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// IdentityServer implements the app-facing routes 11, 14, 15, 16, 18 and 23, the documented extra
// user routes (GET /v1/users/me, DELETE /v1/users/{userId}) and a user's sessions.
type IdentityServer struct {
	identityv1.UnimplementedIdentityServiceServer
	svc *app.Service
}

// ListUserRoles is route 11.
func (s *IdentityServer) ListUserRoles(ctx context.Context, req *identityv1.ListUserRolesRequest) (*identityv1.UserRoleList, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	roles, err := s.svc.ListUserRoles(ctx, caller, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.UserRoles(roles), nil
}

// GetUser is route 14.
func (s *IdentityServer) GetUser(ctx context.Context, req *identityv1.GetUserRequest) (*identityv1.User, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.svc.GetUser(ctx, caller, req.GetUserId())
	if err != nil {
		return nil, err
	}
	return convert.User(u), nil
}

// GetPublicKey is route 15.
func (s *IdentityServer) GetPublicKey(ctx context.Context, req *identityv1.GetPublicKeyRequest) (*identityv1.PublicKey, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	key, err := s.svc.PublicKey(ctx, caller, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return &identityv1.PublicKey{Kind: convert.KindPublicKey, PublicKey: key}, nil
}

// SetAccessStatus is route 16.
func (s *IdentityServer) SetAccessStatus(ctx context.Context, req *identityv1.SetAccessStatusRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.SetAccessStatus(ctx, caller, req.GetAppId(), req.GetUserId(), req.GetAccessStatus()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// UpdateUser is route 18. `test` (query or body) selects a provider's test mode; users have no
// provider side yet, so it is accepted and has no effect. With the user's own tenant access token
// a new email waits for the new address to confirm (app.Service.UpdateUserByToken); with a write
// key it applies at once.
func (s *IdentityServer) UpdateUser(ctx context.Context, req *identityv1.UpdateUserRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	update := s.svc.UpdateUser
	if p, _ := authn.FromContext(ctx); p.Kind == authn.KindTenantToken { // present: CallerApp found it
		update = s.svc.UpdateUserByToken
	}
	if err := update(ctx, caller, req.GetUserId(), patch(req.GetBody().GetUser())); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// GetMe returns the user of the tenant access token; an API key has no user of its own.
func (s *IdentityServer) GetMe(ctx context.Context, _ *identityv1.GetMeRequest) (*identityv1.User, error) {
	p, ok := authn.FromContext(ctx)
	if ok && p.Kind == authn.KindAPIKey {
		return nil, authn.MeWithoutToken("userId", "user")
	}
	if !ok || p.Kind != authn.KindTenantToken || p.AppID == "" || p.UserID == "" {
		return nil, fault.Unauthenticated("this route needs a tenant access token")
	}
	u, err := s.svc.GetMe(ctx, p.AppID, p.UserID)
	if err != nil {
		return nil, err
	}
	return convert.User(u), nil
}

// DeleteUser deletes a user: with a write key any user of the app, with a tenant access token the
// token's own user (the access policy compares userId with the token).
func (s *IdentityServer) DeleteUser(ctx context.Context, req *identityv1.DeleteUserRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.DeleteUser(ctx, caller, req.GetUserId()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// SendReferralInvite is route 23: with a write key for any user of the app, with a tenant access
// token for the token's own user (the access policy compares userId with the token).
func (s *IdentityServer) SendReferralInvite(ctx context.Context, req *identityv1.SendReferralInviteRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	p, _ := authn.FromContext(ctx) // present: CallerApp found it
	if err := s.svc.SendReferralInvite(ctx, caller, app.Invite{
		UserID: req.GetUserId(), Email: req.GetEmail(), Language: req.GetLanguage(), ByToken: p.Kind == authn.KindTenantToken,
	}); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// ListSessions lists a user's live sessions: with a read key any user of the app, with a tenant
// access token the token's own user (the access policy compares userId with the token), whose
// session is then marked current.
func (s *IdentityServer) ListSessions(ctx context.Context, req *identityv1.ListSessionsRequest) (*identityv1.SessionList, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	p, _ := authn.FromContext(ctx) // present: CallerApp found it
	sessions, err := s.svc.ListSessions(ctx, caller, req.GetUserId(), p.SessionID)
	if err != nil {
		return nil, err
	}
	return convert.Sessions(sessions), nil
}

// RevokeSession revokes one session of a user (write key, or the user's own token).
func (s *IdentityServer) RevokeSession(ctx context.Context, req *identityv1.RevokeSessionRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.RevokeSession(ctx, caller, req.GetUserId(), req.GetSessionId()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// RevokeSessions revokes every session of a user (write key, or the user's own token).
func (s *IdentityServer) RevokeSessions(ctx context.Context, req *identityv1.RevokeSessionsRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.RevokeSessions(ctx, caller, req.GetUserId()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// RemoveSecondFactors removes a user's second factors for the app's server (write key).
func (s *IdentityServer) RemoveSecondFactors(ctx context.Context, req *identityv1.RemoveSecondFactorsRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.RemoveSecondFactors(ctx, caller, req.GetUserId(), app.RemovedByApp); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// patch converts the body's user object; an absent object is an empty patch.
func patch(p *identityv1.UserPatch) domain.UserPatch {
	if p == nil {
		return domain.UserPatch{}
	}
	return domain.UserPatch{
		Language: p.Language, Salutation: p.Salutation, SalutationOther: p.SalutationOther,
		Name: p.Name, GivenName: p.GivenName, FamilyName: p.FamilyName, MiddleName: p.MiddleName,
		Nickname: p.Nickname, PreferredUsername: p.PreferredUsername, Profile: p.Profile,
		Picture: p.Picture, Website: p.Website, Email: p.Email, Gender: p.Gender,
		OtherGender: p.OtherGender, Birthdate: p.Birthdate, Zoneinfo: p.Zoneinfo, Locale: p.Locale,
		PhoneNumber: p.PhoneNumber, AcceptedNewsletter: p.AcceptedNewsletter,
	}
}
