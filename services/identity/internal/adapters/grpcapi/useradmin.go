package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/emptypb"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
)

// UserAdminServer implements the app owner's view of the app's users (the console's Users page).
// The access policy admitted the caller for the request's appId.
type UserAdminServer struct {
	identityv1.UnimplementedUserAdminServiceServer
	svc *app.Service
}

// SearchUsers finds the app's users by email prefix or id, a page at a time.
func (s *UserAdminServer) SearchUsers(ctx context.Context, req *identityv1.SearchUsersRequest) (*identityv1.UserPage, error) {
	p, err := s.svc.SearchUsers(ctx, req.GetAppId(), req.GetQuery(), req.GetPageSize(), req.GetAfter())
	if err != nil {
		return nil, err
	}
	return convert.UserPage(p.Users, p.Next), nil
}

// GetUserDetail answers one user with its sessions, provider links and second factors.
func (s *UserAdminServer) GetUserDetail(ctx context.Context, req *identityv1.UserRefRequest) (*identityv1.UserDetail, error) {
	d, err := s.svc.GetUserDetail(ctx, req.GetAppId(), req.GetUserId())
	if err != nil {
		return nil, err
	}
	return convert.UserDetail(d.User, d.Sessions, d.Links, d.Factors, d.RecoveryCodesLeft), nil
}

// SendPasswordReset mails the user a password reset.
func (s *UserAdminServer) SendPasswordReset(ctx context.Context, req *identityv1.UserRefRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, s.svc.SendPasswordReset(ctx, req.GetAppId(), req.GetUserId())
}

// ResendVerification mails the user a fresh verification.
func (s *UserAdminServer) ResendVerification(ctx context.Context, req *identityv1.UserRefRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, s.svc.ResendUserVerification(ctx, req.GetAppId(), req.GetUserId())
}
