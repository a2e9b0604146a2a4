package console

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// The passkey ceremonies' options and state as the fake answers them.
const (
	fakeAssertionOptions    = `{"challenge":"YXNzZXJ0aW9u","allowCredentials":[{"type":"public-key","id":"a2V5"}]}`
	fakeRegistrationOptions = `{"challenge":"cmVnaXN0cmF0aW9u","rp":{"id":"console.example","name":"Berth console"}}`
	fakeState               = "sealed-ceremony-state"
	passkeyID               = "7c3e1d2a-3333-4444-8555-b66667777888"
)

func (f *fake) holdsPasskey() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range f.factors {
		if x.GetKind() == "passkey" {
			return true
		}
	}
	return false
}

func (f *fake) StartMemberPasskeyAssertion(ctx context.Context, in *identityv1.MemberChallengeRequest, _ ...grpc.CallOption) (*identityv1.PasskeyCeremony, error) {
	if err := f.record(ctx, "StartMemberPasskeyAssertion", in); err != nil {
		return nil, err
	}
	if !f.holdsPasskey() {
		return &identityv1.PasskeyCeremony{}, nil
	}
	return &identityv1.PasskeyCeremony{Options: fakeAssertionOptions, State: fakeState}, nil
}

func (f *fake) VerifyMemberPasskey(ctx context.Context, in *identityv1.VerifyMemberPasskeyRequest, _ ...grpc.CallOption) (*identityv1.MemberSignIn, error) {
	if err := f.record(ctx, "VerifyMemberPasskey", in); err != nil {
		return nil, err
	}
	return f.session(), nil
}

func (f *fake) StartMemberPasskeyRegistration(ctx context.Context, in *emptypb.Empty, _ ...grpc.CallOption) (*identityv1.PasskeyCeremony, error) {
	if err := f.record(ctx, "StartMemberPasskeyRegistration", in); err != nil {
		return nil, err
	}
	return &identityv1.PasskeyCeremony{Options: fakeRegistrationOptions, State: fakeState}, nil
}

// FinishMemberPasskeyRegistration answers recovery codes for the account's first factor.
func (f *fake) FinishMemberPasskeyRegistration(ctx context.Context, in *identityv1.FinishMemberPasskeyRegistrationRequest, _ ...grpc.CallOption) (*identityv1.RecoveryCodes, error) {
	if err := f.record(ctx, "FinishMemberPasskeyRegistration", in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	first := len(f.factors) == 0
	f.factors = append(f.factors, &identityv1.MemberFactor{Id: passkeyID, Kind: "passkey", Name: in.GetName(), CreatedAt: start.Format("2006-01-02T15:04:05Z")})
	if !first {
		return &identityv1.RecoveryCodes{}, nil
	}
	return &identityv1.RecoveryCodes{Codes: []string{"eeee-ffff", "gggg-hhhh"}}, nil
}

func (f *fake) ListMemberFactors(ctx context.Context, in *emptypb.Empty, _ ...grpc.CallOption) (*identityv1.MemberFactorList, error) {
	if err := f.record(ctx, "ListMemberFactors", in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &identityv1.MemberFactorList{Items: append([]*identityv1.MemberFactor(nil), f.factors...)}, nil
}

func (f *fake) RemoveMemberTotp(ctx context.Context, in *identityv1.RemoveMemberTotpRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "RemoveMemberTotp", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fake) RemoveMemberPasskey(ctx context.Context, in *identityv1.RemoveMemberPasskeyRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "RemoveMemberPasskey", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}
