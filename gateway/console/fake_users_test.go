package console

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const (
	userID    = "7d3e1a40-3333-4444-8555-b66667777888"
	userEmail = "Ada.Lovelace@example.com"
	// nextCursor is the cursor the fake's search answers while more users follow.
	nextCursor = "YWRhQGV4YW1wbGUuY29tAA"
)

// usersFake answers the users pages' calls (UserAdminService, IdentityService's user routes and
// ResetSecondFactors) from one user it keeps, recording each call in the embedded fake. The
// IdentityService methods the console never calls panic (nil embedded interface).
type usersFake struct {
	*fake
	identityv1.IdentityServiceClient

	user *identityv1.UserDetail
	// next is the cursor SearchUsers answers on a first page ("" for a single page).
	next string
}

// newUsersConsole is a signed-in browser on a console whose users backends are a usersFake.
func newUsersConsole(t *testing.T) (*browser, *usersFake) {
	t.Helper()
	u := &usersFake{fake: newFake(), user: &identityv1.UserDetail{
		Profile:  &identityv1.User{Kind: "user", Id: userID, AppId: testApp, Email: userEmail, Name: "Ada <Lovelace>", EmailVerified: true, Language: "en"},
		TenantId: "8e4f2b51-4444-4555-8666-c77778888999", IdpBEmailVerified: true,
		CreatedAt: "2026-10-01T08:00:00Z", UpdatedAt: "2026-11-01T09:30:00Z", LastSignInAt: "2026-11-27T11:00:00Z", LastSignInIp: "198.51.100.7",
		Sessions:          []*identityv1.Session{{Id: "s-1", CreatedAt: "2026-11-27T11:00:00Z", LastUsedAt: "2026-11-27T11:30:00Z", ClientIp: "198.51.100.7", UserAgent: "Firefox/140"}},
		Providers:         []*identityv1.LinkedProvider{{Slot: "idpB", Email: "ada@provider-b.example", LinkedAt: "2026-10-02T10:00:00Z"}},
		Factors:           []*identityv1.UserFactor{{Id: "f-1", Kind: "totp", CreatedAt: "2026-10-03T10:00:00Z", ConfirmedAt: "2026-10-03T10:01:00Z"}},
		RecoveryCodesLeft: 7,
	}}
	c, _ := newConsole(t, u.fake)
	c.Users, c.Identity, c.Admin = u, u, u
	b := newBrowser(t, c)
	b.signIn()
	return b, u
}

func (u *usersFake) summary() *identityv1.UserSummary {
	p := u.user.GetProfile()
	return &identityv1.UserSummary{Id: p.GetId(), Email: p.GetEmail(), Name: p.GetName(), EmailVerified: p.GetEmailVerified(),
		Frozen: p.GetFreezed(), TenantId: u.user.GetTenantId(), CreatedAt: u.user.GetCreatedAt(), LastSignInAt: u.user.GetLastSignInAt()}
}

// SearchUsers finds the user by a case-insensitive email prefix or its id; a first page answers
// u.next as its cursor, a later page is the last.
func (u *usersFake) SearchUsers(ctx context.Context, in *identityv1.SearchUsersRequest, _ ...grpc.CallOption) (*identityv1.UserPage, error) {
	if err := u.record(ctx, "SearchUsers", in); err != nil {
		return nil, err
	}
	p := u.user.GetProfile()
	q := strings.ToLower(in.GetQuery())
	if p.GetDeleted() || (q != p.GetId() && !strings.HasPrefix(strings.ToLower(p.GetEmail()), q)) {
		return &identityv1.UserPage{}, nil
	}
	if in.GetAfter() != "" {
		return &identityv1.UserPage{}, nil
	}
	return &identityv1.UserPage{Users: []*identityv1.UserSummary{u.summary()}, Next: u.next}, nil
}

func (u *usersFake) GetUserDetail(ctx context.Context, in *identityv1.UserRefRequest, _ ...grpc.CallOption) (*identityv1.UserDetail, error) {
	if err := u.record(ctx, "GetUserDetail", in); err != nil {
		return nil, err
	}
	return u.user, nil
}

func (u *usersFake) SendPasswordReset(ctx context.Context, in *identityv1.UserRefRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, u.record(ctx, "SendPasswordReset", in)
}

func (u *usersFake) ResendVerification(ctx context.Context, in *identityv1.UserRefRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, u.record(ctx, "ResendVerification", in)
}

func (u *usersFake) SetAccessStatus(ctx context.Context, in *identityv1.SetAccessStatusRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := u.record(ctx, "SetAccessStatus", in); err != nil {
		return nil, err
	}
	u.user.Profile.Freezed = in.GetAccessStatus() == "0"
	return &emptypb.Empty{}, nil
}

func (u *usersFake) RevokeSessions(ctx context.Context, in *identityv1.RevokeSessionsRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := u.record(ctx, "RevokeSessions", in); err != nil {
		return nil, err
	}
	u.user.Sessions = nil
	return &emptypb.Empty{}, nil
}

func (u *usersFake) ResetSecondFactors(ctx context.Context, in *identityv1.ResetSecondFactorsRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := u.record(ctx, "ResetSecondFactors", in); err != nil {
		return nil, err
	}
	u.user.Factors, u.user.Sessions, u.user.RecoveryCodesLeft = nil, nil, 0
	return &emptypb.Empty{}, nil
}

func (u *usersFake) DeleteUser(ctx context.Context, in *identityv1.DeleteUserRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := u.record(ctx, "DeleteUser", in); err != nil {
		return nil, err
	}
	u.user.Profile.Deleted = true
	return &emptypb.Empty{}, nil
}
