package grpcapi_test

import (
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/testkit/passkeytest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// asService is the service token's metadata, the console's credential before a session.
var asService = []string{authn.MDServiceToken, serviceToken}

func TestConsoleMemberFlowOverGRPC(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	key, err := e.admin.CreateApiKey(asAdmin(t), &identityv1.CreateApiKeyRequest{AppId: a.app.GetId(), Type: "read", Name: "server"})
	if err != nil {
		t.Fatal(err)
	}

	// berthctl member-add mails the invitation.
	added, err := e.admin.AddProjectMember(asAdmin(t), &identityv1.AddProjectMemberRequest{ProjectId: a.app.GetProjectId(), Email: "ada@example.test", Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	tok := e.mailbox.lastLink(t).Get("token")
	inv, err := e.member.DescribeInvitation(ctxWith(t, asService...), &identityv1.InvitationToken{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	if inv.GetEmail() != "ada@example.test" || inv.GetProjectId() != a.app.GetProjectId() || inv.GetExistingAccount() || inv.GetExpiresAt() == "" {
		t.Errorf("invitation = %v", inv)
	}
	_, err = e.member.AcceptInvitation(asAdmin(t), &identityv1.AcceptInvitationRequest{Token: tok, Name: "Ada", Password: "harbour-lights-42"})
	wantCode(t, "acceptance with the admin token", err, codes.Unauthenticated)
	signIn, err := e.member.AcceptInvitation(ctxWith(t, asService...), &identityv1.AcceptInvitationRequest{
		Token: tok, Name: "Ada", Password: "harbour-lights-42", ClientAddress: "192.0.2.1", UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if signIn.GetToken() == "" || signIn.GetMember().GetMemberId() != added.GetId() || len(signIn.GetMember().GetProjects()) != 1 {
		t.Fatalf("sign-in = %v", signIn)
	}

	_, err = e.member.SignInMember(ctxWith(t, asService...), &identityv1.SignInMemberRequest{Email: "ada@example.test", Password: "wrong-password-1"})
	wantCode(t, "wrong password", err, codes.InvalidArgument)
	again, err := e.member.SignInMember(ctxWith(t, asService...), &identityv1.SignInMemberRequest{Email: "ada@example.test", Password: "harbour-lights-42", ClientAddress: "192.0.2.1"})
	if err != nil || again.GetToken() == "" || again.GetChallenge() != "" {
		t.Fatalf("sign-in = %v, %v", again, err)
	}
	asMember := []string{authn.MDAuthorization, "Bearer " + again.GetToken()}
	prof, err := e.member.DescribeMember(ctxWith(t, asMember...), &emptypb.Empty{})
	if err != nil || prof.GetEmail() != "ada@example.test" || prof.GetProjectId() != a.app.GetProjectId() {
		t.Fatalf("profile = %v, %v", prof, err)
	}
	_, err = e.member.DescribeMember(ctxWith(t, asService...), &emptypb.Empty{})
	wantCode(t, "DescribeMember with the service token", err, codes.Unauthenticated)
	_, err = e.member.SwitchProject(ctxWith(t, asMember...), &identityv1.SwitchProjectRequest{ProjectId: b.app.GetProjectId()})
	wantCode(t, "switching to another's project", err, codes.NotFound)

	// The console's project pages, with the admin token until members' tokens are admitted there.
	_, err = e.member.InviteMember(asAdmin(t), &identityv1.InviteMemberRequest{ProjectId: a.app.GetProjectId(), Email: "ADA@example.test", Name: "Ada"})
	wantCode(t, "inviting a member again", err, codes.AlreadyExists)
	members, err := e.member.ListProjectMembers(asAdmin(t), &identityv1.ListProjectMembersRequest{ProjectId: a.app.GetProjectId()})
	if err != nil || len(members.GetItems()) != 1 || !members.GetItems()[0].GetAccepted() {
		t.Errorf("members = %v, %v", members, err)
	}
	apps, err := e.member.ListProjectApps(asAdmin(t), &identityv1.ListProjectAppsRequest{ProjectId: a.app.GetProjectId()})
	if err != nil || len(apps.GetItems()) != 1 || apps.GetItems()[0].GetId() != a.app.GetId() {
		t.Errorf("apps = %v, %v", apps, err)
	}
	got, err := e.member.GetApp(asAdmin(t), &identityv1.GetAppRequest{AppId: a.app.GetId()})
	if err != nil || got.GetId() != a.app.GetId() {
		t.Errorf("app = %v, %v", got, err)
	}
	keys, err := e.member.ListAppApiKeys(asAdmin(t), &identityv1.GetAppRequest{AppId: a.app.GetId()})
	if err != nil || keys.GetTotalItems() != 3 {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	if _, err := e.member.RevokeApiKey(asAdmin(t), &identityv1.RevokeApiKeyRequest{AppId: a.app.GetId(), KeyId: key.GetKey().GetUuid()}); err != nil {
		t.Fatal(err)
	}
	_, err = e.internal.VerifyApiKey(ctxWith(t, asService...), &identityv1.VerifyApiKeyRequest{ApiKey: key.GetSecret(), ClientId: a.app.GetId()})
	wantCode(t, "a revoked key", err, codes.Unauthenticated)
	_, err = e.member.RevokeApiKey(asAdmin(t), &identityv1.RevokeApiKeyRequest{AppId: b.app.GetId(), KeyId: uuid.NewString()})
	wantCode(t, "revoking an unknown key", err, codes.NotFound)

	if _, err := e.member.SignOutMember(ctxWith(t, asMember...), &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.member.DescribeMember(ctxWith(t, asMember...), &emptypb.Empty{})
	wantCode(t, "a signed-out session's token", err, codes.Unauthenticated)
	if _, err := e.member.DescribeMember(ctxWith(t, authn.MDAuthorization, "Bearer "+signIn.GetToken()), &emptypb.Empty{}); err != nil {
		t.Errorf("the acceptance's own session ended with another: %v", err)
	}
}

// consoleMember adds email to the project, accepts the invitation with password and answers the
// acceptance's operator token as call metadata.
func (e *env) consoleMember(t *testing.T, projectID, email, password string) []string {
	t.Helper()
	if _, err := e.admin.AddProjectMember(asAdmin(t), &identityv1.AddProjectMemberRequest{ProjectId: projectID, Email: email, Name: "Member"}); err != nil {
		t.Fatal(err)
	}
	signIn, err := e.member.AcceptInvitation(ctxWith(t, asService...), &identityv1.AcceptInvitationRequest{
		Token: e.mailbox.lastLink(t).Get("token"), Name: "Member", Password: password, ClientAddress: "192.0.2.1", UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return []string{authn.MDAuthorization, "Bearer " + signIn.GetToken()}
}

func TestAMembersPasskeysAreTheirOwnAndFinishTheirSignInOverGRPC(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	ada := e.consoleMember(t, a.app.GetProjectId(), "ada@example.test", "harbour-lights-42")
	bo := e.consoleMember(t, b.app.GetProjectId(), "bo@example.test", "lantern-coves-77")

	key, err := passkeytest.New("https://berth.test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.member.StartMemberPasskeyRegistration(ctxWith(t, ada...), &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := key.Create(c.GetOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Another project's member cannot finish Ada's ceremony, nor with her password.
	_, err = e.member.FinishMemberPasskeyRegistration(ctxWith(t, bo...), &identityv1.FinishMemberPasskeyRegistrationRequest{
		Name: "Stolen", Credential: cred, State: c.GetState(), CurrentPassword: "lantern-coves-77"})
	wantCode(t, "another member finishing the registration", err, codes.InvalidArgument)
	codesOut, err := e.member.FinishMemberPasskeyRegistration(ctxWith(t, ada...), &identityv1.FinishMemberPasskeyRegistrationRequest{
		Name: "Laptop", Credential: cred, State: c.GetState(), CurrentPassword: "harbour-lights-42"})
	if err != nil || len(codesOut.GetCodes()) != 10 {
		t.Fatalf("registration = %v, %v", codesOut, err)
	}
	list, err := e.member.ListMemberFactors(ctxWith(t, ada...), &emptypb.Empty{})
	if err != nil || len(list.GetItems()) != 1 || list.GetItems()[0].GetName() != "Laptop" || list.GetItems()[0].GetKind() != "passkey" {
		t.Fatalf("Ada's factors = %v, %v", list, err)
	}
	passkeyID := list.GetItems()[0].GetId()

	theirs, err := e.member.ListMemberFactors(ctxWith(t, bo...), &emptypb.Empty{})
	if err != nil || len(theirs.GetItems()) != 0 {
		t.Errorf("another member's factors = %v, %v, want none of Ada's", theirs, err)
	}
	_, err = e.member.RemoveMemberPasskey(ctxWith(t, bo...), &identityv1.RemoveMemberPasskeyRequest{PasskeyId: passkeyID, CurrentPassword: "lantern-coves-77"})
	wantCode(t, "another member removing Ada's passkey", err, codes.NotFound)
	_, err = e.member.ListMemberFactors(ctxWith(t, asService...), &emptypb.Empty{})
	wantCode(t, "the factors with the service token", err, codes.Unauthenticated)
	_, err = e.member.RemoveMemberPasskey(asAdmin(t), &identityv1.RemoveMemberPasskeyRequest{PasskeyId: passkeyID})
	wantCode(t, "removing with the admin token", err, codes.Unauthenticated)
	_, err = e.member.StartMemberPasskeyAssertion(ctxWith(t, bo...), &identityv1.MemberChallengeRequest{Challenge: "x"})
	wantCode(t, "a sign-in step with an operator token", err, codes.Unauthenticated)

	signIn, err := e.member.SignInMember(ctxWith(t, asService...), &identityv1.SignInMemberRequest{Email: "ada@example.test", Password: "harbour-lights-42", ClientAddress: "192.0.2.1", UserAgent: "test"})
	if err != nil || signIn.GetChallenge() == "" || len(signIn.GetFactors()) != 1 || signIn.GetFactors()[0] != "passkey" {
		t.Fatalf("sign-in = %v, %v, want a challenge offering the passkey", signIn, err)
	}
	ac, err := e.member.StartMemberPasskeyAssertion(ctxWith(t, asService...), &identityv1.MemberChallengeRequest{Challenge: signIn.GetChallenge()})
	if err != nil {
		t.Fatal(err)
	}
	assertion, err := key.Get(ac.GetOptions())
	if err != nil {
		t.Fatal(err)
	}
	done, err := e.member.VerifyMemberPasskey(ctxWith(t, asService...), &identityv1.VerifyMemberPasskeyRequest{
		Challenge: signIn.GetChallenge(), Passkey: assertion, State: ac.GetState(), ClientAddress: "192.0.2.1", UserAgent: "test"})
	if err != nil || done.GetToken() == "" || done.GetMember().GetEmail() != "ada@example.test" {
		t.Fatalf("passkey sign-in = %v, %v", done, err)
	}
	if list, _ := e.member.ListMemberFactors(ctxWith(t, ada...), &emptypb.Empty{}); list.GetItems()[0].GetLastUsedAt() == "" {
		t.Errorf("the passkey's last use is not recorded: %v", list)
	}
}
