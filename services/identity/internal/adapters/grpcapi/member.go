package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// MemberServer implements the console's member accounts. The steps before a session are called by
// the console with the service token; the others act on the operator token's own member, or on
// what the request names, which the access policy scoped to the caller.
type MemberServer struct {
	identityv1.UnimplementedMemberServiceServer
	svc *app.Service
}

func principal(ctx context.Context) authn.Principal {
	p, _ := authn.FromContext(ctx)
	return p
}

func memberSignIn(in app.MemberSignIn) *identityv1.MemberSignIn {
	if in.Token == "" {
		factors := make([]string, 0, len(in.Factors))
		for _, k := range in.Factors {
			factors = append(factors, string(k))
		}
		return &identityv1.MemberSignIn{Challenge: in.Challenge, Factors: factors}
	}
	return &identityv1.MemberSignIn{Token: in.Token, ExpiresAt: convert.Timestamp(in.ExpiresAt), Member: memberProfile(in.Profile)}
}

func memberProfile(p app.MemberProfile) *identityv1.MemberProfile {
	return convert.MemberProfile(p.Member, p.Account, p.Projects, p.SecondFactor)
}

// DescribeInvitation checks an invitation link's token without using it.
func (s *MemberServer) DescribeInvitation(ctx context.Context, req *identityv1.InvitationToken) (*identityv1.Invitation, error) {
	v, err := s.svc.DescribeInvitation(ctx, req.GetToken())
	if err != nil {
		return nil, err
	}
	return &identityv1.Invitation{Email: v.Invitation.Email, ProjectId: v.Project.ID, ProjectName: v.Project.Name,
		ExpiresAt: convert.Timestamp(v.Invitation.ExpiresAt), ExistingAccount: v.ExistingAccount}, nil
}

// AcceptInvitation uses an invitation and signs the member in.
func (s *MemberServer) AcceptInvitation(ctx context.Context, req *identityv1.AcceptInvitationRequest) (*identityv1.MemberSignIn, error) {
	out, err := s.svc.AcceptInvitation(ctx, app.AcceptInput{Token: req.GetToken(), Name: req.GetName(), Password: req.GetPassword(),
		Client: app.MemberClient{IP: req.GetClientAddress(), UserAgent: req.GetUserAgent()}})
	if err != nil {
		return nil, err
	}
	return memberSignIn(out), nil
}

// SignInMember checks an address and password.
func (s *MemberServer) SignInMember(ctx context.Context, req *identityv1.SignInMemberRequest) (*identityv1.MemberSignIn, error) {
	out, err := s.svc.SignInMember(ctx, req.GetEmail(), req.GetPassword(), app.MemberClient{IP: req.GetClientAddress(), UserAgent: req.GetUserAgent()})
	if err != nil {
		return nil, err
	}
	return memberSignIn(out), nil
}

// VerifyMemberSecondFactor finishes a sign-in that asked for the second factor.
func (s *MemberServer) VerifyMemberSecondFactor(ctx context.Context, req *identityv1.VerifyMemberSecondFactorRequest) (*identityv1.MemberSignIn, error) {
	out, err := s.svc.VerifyMemberSecondFactor(ctx, req.GetChallenge(), req.GetCode(), app.MemberClient{IP: req.GetClientAddress(), UserAgent: req.GetUserAgent()})
	if err != nil {
		return nil, err
	}
	return memberSignIn(out), nil
}

// DescribeMember answers the operator token's member.
func (s *MemberServer) DescribeMember(ctx context.Context, _ *emptypb.Empty) (*identityv1.MemberProfile, error) {
	p, err := s.svc.DescribeMember(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	return memberProfile(p), nil
}

// SwitchProject moves the member's session to another project of theirs.
func (s *MemberServer) SwitchProject(ctx context.Context, req *identityv1.SwitchProjectRequest) (*identityv1.MemberSignIn, error) {
	out, err := s.svc.SwitchProject(ctx, principal(ctx), req.GetProjectId())
	if err != nil {
		return nil, err
	}
	return memberSignIn(out), nil
}

// SignOutMember ends the operator token's session.
func (s *MemberServer) SignOutMember(ctx context.Context, _ *emptypb.Empty) (*emptypb.Empty, error) {
	if err := s.svc.SignOutMember(ctx, principal(ctx)); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// StartMemberTotp starts the TOTP enrolment of the member account.
func (s *MemberServer) StartMemberTotp(ctx context.Context, _ *emptypb.Empty) (*identityv1.TotpKey, error) {
	k, err := s.svc.StartMemberTotp(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	return &identityv1.TotpKey{OtpauthUrl: k.URL(), Secret: k.Secret()}, nil
}

// ConfirmMemberTotp confirms the enrolment and answers the recovery codes.
func (s *MemberServer) ConfirmMemberTotp(ctx context.Context, req *identityv1.ConfirmMemberTotpRequest) (*identityv1.RecoveryCodes, error) {
	codes, err := s.svc.ConfirmMemberTotp(ctx, principal(ctx), req.GetCode(), req.GetCurrentPassword())
	if err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: codes}, nil
}

// StartMemberPasskeyAssertion answers the passkey options of a sign-in's second step.
func (s *MemberServer) StartMemberPasskeyAssertion(ctx context.Context, req *identityv1.MemberChallengeRequest) (*identityv1.PasskeyCeremony, error) {
	return ceremony(s.svc.StartMemberPasskeyAssertion(ctx, req.GetChallenge()))
}

// VerifyMemberPasskey finishes a sign-in's second step with a passkey.
func (s *MemberServer) VerifyMemberPasskey(ctx context.Context, req *identityv1.VerifyMemberPasskeyRequest) (*identityv1.MemberSignIn, error) {
	out, err := s.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: req.GetChallenge(), Passkey: req.GetPasskey(), State: req.GetState(),
		Client: app.MemberClient{IP: req.GetClientAddress(), UserAgent: req.GetUserAgent()}})
	if err != nil {
		return nil, err
	}
	return memberSignIn(out), nil
}

// StartMemberPasskeyRegistration begins adding a passkey to the member account.
func (s *MemberServer) StartMemberPasskeyRegistration(ctx context.Context, _ *emptypb.Empty) (*identityv1.PasskeyCeremony, error) {
	return ceremony(s.svc.StartMemberPasskeyRegistration(ctx, principal(ctx)))
}

// FinishMemberPasskeyRegistration stores the member's new passkey.
func (s *MemberServer) FinishMemberPasskeyRegistration(ctx context.Context, req *identityv1.FinishMemberPasskeyRegistrationRequest) (*identityv1.RecoveryCodes, error) {
	codes, err := s.svc.FinishMemberPasskeyRegistration(ctx, principal(ctx), app.MemberPasskeyRegistration{
		Name: req.GetName(), Credential: req.GetCredential(), State: req.GetState(), Current: req.GetCurrentPassword()})
	if err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: codes}, nil
}

// ListMemberFactors lists the member account's second factors.
func (s *MemberServer) ListMemberFactors(ctx context.Context, _ *emptypb.Empty) (*identityv1.MemberFactorList, error) {
	factors, err := s.svc.ListMemberFactors(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	return convert.MemberFactors(factors), nil
}

// RemoveMemberPasskey removes one passkey of the member account.
func (s *MemberServer) RemoveMemberPasskey(ctx context.Context, req *identityv1.RemoveMemberPasskeyRequest) (*emptypb.Empty, error) {
	if err := s.svc.RemoveMemberPasskey(ctx, principal(ctx), req.GetPasskeyId(), req.GetCurrentPassword()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// RemoveMemberTotp removes the member account's TOTP factor.
func (s *MemberServer) RemoveMemberTotp(ctx context.Context, req *identityv1.RemoveMemberTotpRequest) (*emptypb.Empty, error) {
	if err := s.svc.RemoveMemberTotp(ctx, principal(ctx), req.GetCurrentPassword()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// InviteMember adds a member to the project and mails the invitation. A member of the project
// with that address already is AlreadyExists.
func (s *MemberServer) InviteMember(ctx context.Context, req *identityv1.InviteMemberRequest) (*identityv1.ProjectMember, error) {
	m, err := s.svc.InviteMember(ctx, req.GetProjectId(), req.GetEmail(), req.GetName(), req.GetLanguage())
	if errors.Is(err, domain.ErrMemberTaken) {
		return nil, status.Error(codes.AlreadyExists, "this address is already a member of this project")
	}
	if err != nil {
		return nil, err
	}
	return convert.ProjectMember(m), nil
}

// ListProjectMembers lists the project's members.
func (s *MemberServer) ListProjectMembers(ctx context.Context, req *identityv1.ListProjectMembersRequest) (*identityv1.ProjectMemberList, error) {
	ms, err := s.svc.ListProjectMembers(ctx, req.GetProjectId())
	if err != nil {
		return nil, err
	}
	out := &identityv1.ProjectMemberList{Items: make([]*identityv1.ProjectMemberItem, 0, len(ms))}
	for _, m := range ms {
		out.Items = append(out.Items, &identityv1.ProjectMemberItem{Member: convert.ProjectMember(m.Member), Accepted: m.Member.Accepted(), SecondFactor: m.SecondFactor})
	}
	return out, nil
}

// ListProjectApps lists the project's apps.
func (s *MemberServer) ListProjectApps(ctx context.Context, req *identityv1.ListProjectAppsRequest) (*identityv1.AppList, error) {
	as, err := s.svc.ListProjectApps(ctx, req.GetProjectId())
	if err != nil {
		return nil, err
	}
	return convert.Apps(as), nil
}

// GetApp answers one app (its public key, never a secret).
func (s *MemberServer) GetApp(ctx context.Context, req *identityv1.GetAppRequest) (*identityv1.App, error) {
	a, err := s.svc.GetApp(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// ListAppApiKeys lists the app's API keys that work.
func (s *MemberServer) ListAppApiKeys(ctx context.Context, req *identityv1.GetAppRequest) (*identityv1.ApiKeyList, error) {
	ks, err := s.svc.ListAppAPIKeys(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.APIKeys(ks), nil
}

// RevokeApiKey revokes one API key of the app.
func (s *MemberServer) RevokeApiKey(ctx context.Context, req *identityv1.RevokeApiKeyRequest) (*emptypb.Empty, error) {
	if err := s.svc.RevokeAPIKey(ctx, req.GetAppId(), req.GetKeyId()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}
