package app_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"google.golang.org/grpc/codes"
)

const memberPassword = "harbour-lights-42"

var browserOf = app.MemberClient{IP: "192.0.2.7", UserAgent: "Console test"}

var invitationLink = regexp.MustCompile(`https://berth\.test/console/invitation\?token=[A-Za-z0-9_-]+`)

// invite invites email to the project and returns the token of the link the mail carries.
func (f *fixture) inviteMember(t *testing.T, projectID, email string) (domain.ProjectMember, string) {
	t.Helper()
	m, err := f.svc.InviteMember(context.Background(), projectID, email, "Ada", "")
	if err != nil {
		t.Fatal(err)
	}
	msg := f.mailer.last(t)
	link := invitationLink.FindString(msg.Text)
	if msg.To != email || link == "" {
		t.Fatalf("invitation mail to %q without a link:\n%s", msg.To, msg.Text)
	}
	u, _ := url.Parse(link)
	return m, u.Query().Get("token")
}

// consoleMember invites and accepts email to the project with memberPassword and answers the
// sign-in of the acceptance.
func (f *fixture) consoleMember(t *testing.T, projectID, email string) app.MemberSignIn {
	t.Helper()
	_, tok := f.inviteMember(t, projectID, email)
	out, err := f.svc.AcceptInvitation(context.Background(), app.AcceptInput{Token: tok, Name: "Ada", Password: memberPassword, Client: browserOf})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// principalOf verifies an operator token as the access policy does.
func (f *fixture) principalOf(t *testing.T, raw string) authn.Principal {
	t.Helper()
	p, err := f.svc.VerifyOperatorToken(context.Background(), raw)
	if err != nil {
		t.Fatalf("operator token does not verify: %v", err)
	}
	p.Kind = authn.KindOperator
	return p
}

func wantKind(t *testing.T, err error, k fault.Kind) {
	t.Helper()
	if f, ok := fault.As(err); !ok || f.Kind() != k {
		t.Fatalf("error = %v, want a %v fault", err, k)
	}
}

func TestAnInvitedPersonSetsAPasswordAndIsSignedIn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m, tok := f.inviteMember(t, f.app.ProjectID, "ada@example.test")

	v, err := f.svc.DescribeInvitation(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if v.Invitation.Email != "ada@example.test" || v.Project.ID != f.app.ProjectID || v.ExistingAccount ||
		!v.Invitation.ExpiresAt.Equal(f.now.Add(domain.InvitationTTL)) {
		t.Errorf("invitation = %+v", v)
	}
	// The hosted login's password rules: a listed (breached) password and the address's own
	// name are refused, and the invitation stays usable.
	for _, pw := range []string{"password123", "ada@example.test"} {
		_, err := f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: tok, Name: "Ada", Password: pw, Client: browserOf})
		wantInvalid(t, err, "password")
	}
	_, err = f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: tok, Name: " ", Password: memberPassword, Client: browserOf})
	wantInvalid(t, err, "name")

	out, err := f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: tok, Name: "Ada Lovelace", Password: memberPassword, Client: browserOf})
	if err != nil {
		t.Fatal(err)
	}
	if out.Token == "" || out.Challenge != "" || !out.ExpiresAt.Equal(f.now.Add(domain.MemberSessionTTL)) {
		t.Fatalf("acceptance = %+v, want a 12-hour session", out)
	}
	p := f.principalOf(t, out.Token)
	if p.UserID != m.ID || p.ProjectID != f.app.ProjectID || p.SessionID == "" {
		t.Errorf("principal = %+v", p)
	}
	prof, err := f.svc.DescribeMember(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if prof.Account.Name != "Ada Lovelace" || len(prof.Projects) != 1 || prof.Projects[0].ID != f.app.ProjectID || prof.SecondFactor {
		t.Errorf("profile = %+v", prof)
	}

	_, err = f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: tok, Name: "Eve", Password: memberPassword, Client: browserOf})
	if !errors.Is(err, domain.ErrInvitationSpent) {
		t.Errorf("second use: error = %v, want ErrInvitationSpent", err)
	}
	_, err = f.svc.DescribeInvitation(ctx, tok)
	if !errors.Is(err, domain.ErrInvitationSpent) {
		t.Errorf("describing a used invitation: error = %v, want ErrInvitationSpent", err)
	}
}

func TestAnInvitationExpiresAfterSevenDays(t *testing.T) {
	f := newFixture(t)
	_, tok := f.inviteMember(t, f.app.ProjectID, "ada@example.test")
	f.now = f.now.Add(domain.InvitationTTL)
	_, err := f.svc.AcceptInvitation(context.Background(), app.AcceptInput{Token: tok, Name: "Ada", Password: memberPassword, Client: browserOf})
	if !errors.Is(err, domain.ErrInvitationSpent) {
		t.Fatalf("error = %v, want ErrInvitationSpent", err)
	}
	for _, bad := range []string{"", "not-a-token", strings.Repeat("a", 43)} {
		if _, err := f.svc.DescribeInvitation(context.Background(), bad); !errors.Is(err, domain.ErrInvitationSpent) {
			t.Errorf("token %q: error = %v, want ErrInvitationSpent", bad, err)
		}
	}
}

func TestInvitingAMemberOfTheProjectAgainIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.inviteMember(t, f.app.ProjectID, "ada@example.test")
	sent := f.mailer.count()
	_, err := f.svc.InviteMember(ctx, f.app.ProjectID, "ADA@example.test", "Ada", "")
	if !errors.Is(err, domain.ErrMemberTaken) {
		t.Errorf("error = %v, want ErrMemberTaken", err)
	}
	_, err = f.svc.InviteMember(ctx, f.app.ProjectID, "bob@example.test", "Bob", "fr-FR")
	wantInvalid(t, err, "language")
	if f.mailer.count() != sent {
		t.Error("a refused invitation was mailed")
	}
}

func TestInvitationsAreMailedInTheChosenLanguage(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.InviteMember(context.Background(), f.app.ProjectID, "ada@example.test", "Ada", "DE"); err != nil {
		t.Fatal(err)
	}
	msg := f.mailer.last(t)
	if !strings.HasPrefix(msg.Subject, "Deine Einladung") || !invitationLink.MatchString(msg.HTML) {
		t.Errorf("German invitation: %q\n%s", msg.Subject, msg.HTML)
	}
}

func TestWithoutAMailerTheConsoleCannotInviteButTheAdminAPIAddsTheMember(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Mailer = nil })
	ctx := context.Background()
	_, err := f.svc.InviteMember(ctx, f.app.ProjectID, "ada@example.test", "Ada", "")
	wantKind(t, err, fault.KindUnavailable)
	m, err := f.svc.AddProjectMember(ctx, f.app.ProjectID, "ada@example.test", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.VerifyOperatorToken(ctx, f.operatorToken(t, m.ID)); err != nil {
		t.Errorf("operator token of a member added without a mailer: %v", err)
	}
}

func TestAddProjectMemberSendsTheInvitation(t *testing.T) {
	f := newFixture(t)
	m, err := f.svc.AddProjectMember(context.Background(), f.app.ProjectID, "ada@example.test", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if msg := f.mailer.last(t); msg.To != m.Email || !invitationLink.MatchString(msg.Text) {
		t.Errorf("member-add sent %q to %q", msg.Text, msg.To)
	}
}

func TestSignInMemberOutcomes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	for _, tc := range []struct {
		name, email, password string
		ok                    bool
	}{
		{"the right password", "ada@example.test", memberPassword, true},
		{"the address in other case and spacing", " ADA@example.test", memberPassword, true},
		{"a wrong password", "ada@example.test", "wrong-password-1", false},
		{"an unknown address", "nobody@example.test", memberPassword, false},
		{"an overlong password", "ada@example.test", strings.Repeat("x", 5000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.svc.SignInMember(ctx, tc.email, tc.password, browserOf)
			if tc.ok {
				if err != nil || out.Token == "" {
					t.Fatalf("sign-in = %+v, %v", out, err)
				}
				return
			}
			// One answer for an unknown address and a wrong password.
			if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Message() != "invalid email or password" {
				t.Fatalf("error = %v, want the generic credentials answer", err)
			}
		})
	}
	_, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, app.MemberClient{IP: browserOf.IP, UserAgent: "bad\x00agent"})
	wantInvalid(t, err, "user_agent")
}

func TestSignInMemberIsLimitedPerAddressLikeTheHostedLogin(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerEmailAddress: 3, PerIP: 5} })
	ctx := context.Background()
	f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	for range 3 {
		if _, err := f.svc.SignInMember(ctx, "ada@example.test", "wrong-password-1", browserOf); err == nil {
			t.Fatal("a wrong password signed in")
		}
	}
	_, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, browserOf)
	wantKind(t, err, fault.KindExhausted)
	// The owner on another address keeps their sign-in; the guessing address is refused for
	// other accounts once over its own limit.
	if _, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, app.MemberClient{IP: "198.51.100.1", UserAgent: "x"}); err != nil {
		t.Errorf("owner elsewhere: %v", err)
	}
	for range 2 {
		_, _ = f.svc.SignInMember(ctx, "other@example.test", "wrong-password-1", browserOf)
	}
	_, err = f.svc.SignInMember(ctx, "third@example.test", "wrong-password-1", browserOf)
	wantKind(t, err, fault.KindExhausted)
}

func TestSignOutEndsTheSessionsTokens(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out := f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	p := f.principalOf(t, out.Token)
	if err := f.svc.SignOutMember(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.VerifyOperatorToken(ctx, out.Token); err == nil {
		t.Fatal("the token of an ended session still verifies")
	}
	// A token berthctl issues names no session: it keeps working and cannot sign out.
	tok := f.operatorToken(t, p.UserID)
	bp := f.principalOf(t, tok)
	wantKind(t, f.svc.SignOutMember(ctx, bp), fault.KindPrecondition)
	if _, err := f.svc.VerifyOperatorToken(ctx, tok); err != nil {
		t.Errorf("berthctl token after a sign-out: %v", err)
	}
}

func TestAConsoleSessionEndsAfterTwelveHours(t *testing.T) {
	f := newFixture(t)
	out := f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	f.now = f.now.Add(domain.MemberSessionTTL - time.Minute)
	f.principalOf(t, out.Token)
	f.now = f.now.Add(time.Minute)
	if _, err := f.svc.VerifyOperatorToken(context.Background(), out.Token); err == nil {
		t.Fatal("a session older than 12 hours still verifies")
	}
}

func TestOneAccountSpansProjectsAndSwitchesOnlyToItsOwn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	first := f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	second, err := f.svc.CreateProject(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := f.svc.CreateProject(ctx, "stranger")
	if err != nil {
		t.Fatal(err)
	}
	m2, tok := f.inviteMember(t, second.ID, "Ada@Example.test")
	v, err := f.svc.DescribeInvitation(ctx, tok)
	if err != nil || !v.ExistingAccount {
		t.Fatalf("invitation of an existing account = %+v, %v", v, err)
	}
	_, err = f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: tok, Password: "not-the-password-1", Client: browserOf})
	wantInvalid(t, err, "password")
	// The existing account proves its password and keeps its name.
	if _, err := f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: tok, Name: "Other", Password: memberPassword, Client: browserOf}); err != nil {
		t.Fatal(err)
	}
	p := f.principalOf(t, first.Token)
	prof, err := f.svc.DescribeMember(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Projects) != 2 || prof.Account.Name != "Ada" {
		t.Fatalf("profile = %+v, want both projects", prof)
	}

	_, err = f.svc.SwitchProject(ctx, p, stranger.ID)
	wantNotFound(t, err)
	_, err = f.svc.SwitchProject(ctx, p, "not-a-uuid")
	wantInvalid(t, err, "projectId")
	switched, err := f.svc.SwitchProject(ctx, p, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	np := f.principalOf(t, switched.Token)
	if np.UserID != m2.ID || np.ProjectID != second.ID {
		t.Errorf("switched principal = %+v", np)
	}
	if _, err := f.svc.VerifyOperatorToken(ctx, first.Token); err == nil {
		t.Error("the session switched away from still verifies")
	}
}

func TestSecondFactorGuardsTheConsoleSignIn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out := f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	p := f.principalOf(t, out.Token)
	key, err := f.svc.StartMemberTotp(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.svc.StartMemberTotp(ctx, p)
	if err != nil || again.Secret() != key.Secret() {
		t.Fatalf("restarted enrolment = %v, %v, want the same key", again, err)
	}
	_, err = f.svc.ConfirmMemberTotp(ctx, p, totpCode(t, key.Secret(), f.now), "wrong-password-1")
	wantInvalid(t, err, "current_password")
	_, err = f.svc.ConfirmMemberTotp(ctx, p, "000000", memberPassword)
	wantInvalid(t, err, "code")
	codes, err := f.svc.ConfirmMemberTotp(ctx, p, totpCode(t, key.Secret(), f.now), memberPassword)
	if err != nil || len(codes) != domain.RecoveryCodeCount {
		t.Fatalf("confirmation = %v, %v", codes, err)
	}
	_, err = f.svc.StartMemberTotp(ctx, p)
	if !errors.Is(err, domain.ErrFactorEnrolled) {
		t.Errorf("enrolling twice: error = %v, want ErrFactorEnrolled", err)
	}
	if prof, _ := f.svc.DescribeMember(ctx, p); !prof.SecondFactor {
		t.Error("profile does not show the second factor")
	}

	f.now = f.now.Add(time.Minute)
	signIn := func() string {
		t.Helper()
		out, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, browserOf)
		if err != nil || out.Token != "" || out.Challenge == "" {
			t.Fatalf("sign-in of a guarded account = %+v, %v, want a challenge", out, err)
		}
		return out.Challenge
	}

	t.Run("wrong codes kill the challenge", func(t *testing.T) {
		ch := signIn()
		for range domain.MaxCodeAttempts {
			_, err := f.svc.VerifyMemberSecondFactor(ctx, ch, "123456", browserOf)
			wantInvalid(t, err, "code")
		}
		_, err := f.svc.VerifyMemberSecondFactor(ctx, ch, totpCode(t, key.Secret(), f.now), browserOf)
		wantInvalid(t, err, "challenge")
	})
	t.Run("a TOTP code signs in once, and the challenge is single use", func(t *testing.T) {
		ch := signIn()
		code := totpCode(t, key.Secret(), f.now)
		out, err := f.svc.VerifyMemberSecondFactor(ctx, ch, code, browserOf)
		if err != nil || out.Token == "" {
			t.Fatalf("verification = %+v, %v", out, err)
		}
		f.principalOf(t, out.Token)
		_, err = f.svc.VerifyMemberSecondFactor(ctx, ch, code, browserOf)
		wantInvalid(t, err, "challenge")
		// The same code on a fresh challenge is a replay.
		_, err = f.svc.VerifyMemberSecondFactor(ctx, signIn(), code, browserOf)
		wantInvalid(t, err, "code")
	})
	t.Run("a recovery code signs in once", func(t *testing.T) {
		out, err := f.svc.VerifyMemberSecondFactor(ctx, signIn(), strings.ToUpper(codes[0]), browserOf)
		if err != nil || out.Token == "" {
			t.Fatalf("verification = %+v, %v", out, err)
		}
		_, err = f.svc.VerifyMemberSecondFactor(ctx, signIn(), codes[0], browserOf)
		wantInvalid(t, err, "code")
	})
	t.Run("a challenge expires after five minutes", func(t *testing.T) {
		ch := signIn()
		f.now = f.now.Add(domain.MemberChallengeTTL)
		_, err := f.svc.VerifyMemberSecondFactor(ctx, ch, codes[1], browserOf)
		wantInvalid(t, err, "challenge")
	})
}

// A member removes their TOTP factor with the current password: its codes no longer finish a
// sign-in, the password alone signs in, and TOTP can be enrolled again.
func TestAMemberRemovesTheTOTPFactorWithTheCurrentPassword(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "ada@example.test").Token)
	wantStatus(t, "removing a TOTP factor never enrolled", f.svc.RemoveMemberTotp(ctx, p, memberPassword), codes.NotFound)
	key, err := f.svc.StartMemberTotp(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ConfirmMemberTotp(ctx, p, totpCode(t, key.Secret(), f.now), memberPassword); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute)
	out, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, browserOf)
	if err != nil || out.Challenge == "" {
		t.Fatalf("sign-in with TOTP = %+v, %v, want a challenge", out, err)
	}
	waiting := out.Challenge

	wantInvalid(t, f.svc.RemoveMemberTotp(ctx, p, "not-my-password"), "current_password")
	if prof, _ := f.svc.DescribeMember(ctx, p); !prof.SecondFactor {
		t.Fatal("a refused removal turned the second factor off")
	}
	other := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "bo@example.test").Token)
	wantStatus(t, "another account's removal", f.svc.RemoveMemberTotp(ctx, other, memberPassword), codes.NotFound)
	if err := f.svc.RemoveMemberTotp(ctx, p, memberPassword); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.VerifyMemberSecondFactor(ctx, waiting, totpCode(t, key.Secret(), f.now), browserOf)
	wantInvalid(t, err, "code")
	if out, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, browserOf); err != nil || out.Token == "" {
		t.Errorf("sign-in after the removal = %+v, %v, want a session at once", out, err)
	}
	if _, err := f.svc.StartMemberTotp(ctx, p); err != nil {
		t.Errorf("enrolling TOTP again: %v", err)
	}
}

func TestAMemberWhoDidNotAcceptHasNoAccountToGuard(t *testing.T) {
	f := newFixture(t)
	m := f.member(t, f.app.ProjectID, "op@example.test")
	p := f.principalOf(t, f.operatorToken(t, m.ID))
	_, err := f.svc.StartMemberTotp(context.Background(), p)
	wantKind(t, err, fault.KindPrecondition)
	prof, err := f.svc.DescribeMember(context.Background(), p)
	if err != nil || prof.Member.Email != "op@example.test" || len(prof.Projects) != 1 {
		t.Errorf("profile of a member without an account = %+v, %v", prof, err)
	}
}

func TestProjectListsAndKeyRevocation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	f.now = f.now.Add(time.Second)
	f.inviteMember(t, f.app.ProjectID, "bob@example.test")
	ms, err := f.svc.ListProjectMembers(ctx, f.app.ProjectID)
	if err != nil || len(ms) != 2 || !ms[0].Member.Accepted() || ms[1].Member.Accepted() {
		t.Fatalf("members = %+v, %v", ms, err)
	}
	apps, err := f.svc.ListProjectApps(ctx, f.app.ProjectID)
	if err != nil || len(apps) != 1 || apps[0].ID != f.app.ID {
		t.Fatalf("apps = %+v, %v", apps, err)
	}
	_, err = f.svc.ListProjectApps(ctx, "6f1c1c3e-0000-4000-8000-000000000000")
	wantNotFound(t, err)

	k, full, err := f.svc.CreateAPIKey(ctx, f.app.ID, "read", "server", "")
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	if err := f.svc.RevokeAPIKey(ctx, f.app.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if evs := f.drain(t); len(evs) != 1 || evs[0].Type != identityv1.EventAPIKeyChanged {
		t.Errorf("revocation events = %v, want the key event caches evict on", types(evs))
	}
	if _, err := f.svc.VerifyAPIKey(ctx, full, f.app.ID); err == nil {
		t.Error("a revoked key still verifies")
	}
	keys, err := f.svc.ListAppAPIKeys(ctx, f.app.ID)
	if err != nil || len(keys) != 0 {
		t.Errorf("keys after the revocation = %+v, %v", keys, err)
	}
	wantNotFound(t, f.svc.RevokeAPIKey(ctx, f.app.ID, k.ID))
}
