package app_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const accountCallback = "https://berth.test/account/callback"

// The account page signs in as an ordinary client of the app, returning to the deployment's own
// callback, which no app registers: identity accepts it for every enabled app, and nothing else.
func TestTheAccountCallbackIsARedirectURIOfEveryEnabledApp(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.signUp(t, "grace@example.test")
	a, err := f.svc.DescribeAccount(ctx, f.app.ID)
	if err != nil || a.ID != f.app.ID || f.svc.AccountCallbackURI() != accountCallback {
		t.Fatalf("DescribeAccount = %v, %v; callback %q", a.ID, err, f.svc.AccountCallbackURI())
	}
	p := f.params()
	p.RedirectURI = accountCallback
	redirect, err := f.svc.SignIn(ctx, app.SignInInput{Params: p, Email: "grace@example.test", Password: goodPassword, ClientIP: clientIP})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ExchangeToken(ctx, app.TokenRequest{
		ClientID: f.app.ID, GrantType: "authorization_code", RedirectURI: accountCallback, Code: query(t, redirect.URL).Get("code"),
	}); err != nil {
		t.Fatalf("exchange of the account page's code: %v", err)
	}
	for _, uri := range []string{"https://berth.test/account/other", "https://evil.test/account/callback"} {
		_, err := f.svc.DescribeLogin(ctx, f.app.ID, uri)
		wantStatus(t, uri, err, codes.InvalidArgument)
	}
	if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.DescribeAccount(ctx, f.app.ID)
	wantStatus(t, "account page of a disabled app", err, codes.InvalidArgument)
}

// changePassword changes the password of the user of tok from goodPassword to changedPassword.
func (f *fixture) changePassword(tok app.Tokens, current, next string) error {
	return f.svc.ChangePassword(context.Background(), app.PasswordChange{AccessToken: tok.AccessToken, Current: current, New: next, ClientIP: clientIP})
}

const changedPassword = "a brand new password"

func TestChangingThePasswordRefusesAWrongCurrentPasswordAndKeepsTheOldOne(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.session(t, "grace@example.test")
	err := f.changePassword(tok, "not my password", changedPassword)
	wantStatus(t, "wrong current password", err, codes.InvalidArgument)
	if fieldOf(err) != "current_password" {
		t.Errorf("field = %q, want current_password", fieldOf(err))
	}
	if _, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: "grace@example.test", Password: goodPassword, ClientIP: clientIP}); err != nil {
		t.Errorf("the old password stopped working after a refused change: %v", err)
	}
	if _, err := f.refresh(tok.RefreshToken, "n"); err != nil {
		t.Errorf("a refused change ended the session: %v", err)
	}
}

func TestChangingThePasswordFollowsTheSignUpRulesNamingTheBrokenOne(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.session(t, "grace@example.test")
	for _, tc := range []struct{ password, reason string }{
		{"short", "length"},
		{"password", "common"},
		{"grace-is-my-password", "email"},
	} {
		err := f.changePassword(tok, goodPassword, tc.password)
		wantStatus(t, tc.password, err, codes.InvalidArgument)
		if st := grpcx.StatusOf(err); grpcx.FieldOf(st) != "password" || grpcx.ReasonOf(st) != tc.reason {
			t.Errorf("%q: field %q reason %q, want password/%s", tc.password, grpcx.FieldOf(st), grpcx.ReasonOf(st), tc.reason)
		}
	}
}

// The current password is checked like a sign-in: a stolen access token gets no more guesses than
// the sign-in page gives.
func TestChangingThePasswordCountsWrongCurrentPasswordsUnderTheSignInLimits(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerEmailAddress: 2} })
	f.signUp(t, "grace@example.test")
	tok, _ := f.session(t, "grace@example.test") // a sign-in that succeeds, which clears the counts
	for range 2 {
		wantStatus(t, "wrong guess", f.changePassword(tok, "guess", changedPassword), codes.InvalidArgument)
	}
	wantStatus(t, "guess over the limit", f.changePassword(tok, goodPassword, changedPassword), codes.ResourceExhausted)
}

func TestChangingThePasswordWritesItsEventEndsEverySessionAndTheNewPasswordSignsIn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	first, u := f.session(t, "grace@example.test")
	second, _ := f.session(t, "grace@example.test")
	f.drain(t)

	if err := f.changePassword(second, goodPassword, changedPassword); err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]app.Tokens{"first": first, "second": second} {
		_, err := f.refresh(tok.RefreshToken, "n")
		wantStatus(t, name+" session's refresh after the change", err, codes.InvalidArgument)
	}
	if got := f.sessions(t, u.ID, ""); len(got) != 0 {
		t.Errorf("sessions after the change = %+v, want none", got)
	}
	evs := f.drain(t)
	var changed []*identityv1.UserPasswordChanged
	for _, ev := range evs {
		if ev.Type == identityv1.EventUserPasswordChanged {
			var p identityv1.UserPasswordChanged
			if err := ev.Decode(&p); err != nil {
				t.Fatal(err)
			}
			changed = append(changed, &p)
		}
	}
	if len(changed) != 1 || changed[0].GetReason() != app.ChangedReason || changed[0].GetUserId() != u.ID || changed[0].GetTenantRef() != u.TenantID {
		t.Errorf("password-changed events = %v, want one with reason %s", changed, app.ChangedReason)
	}
	revoked := sessionsRevoked(t, evs)
	if len(revoked) != 1 || revoked[0].GetReason() != domain.RevokedPasswordChanged || !revoked[0].GetAll() || len(revoked[0].GetSessionIds()) != 2 {
		t.Errorf("sessions revoked events = %v, want one for both sessions with reason %s", revoked, domain.RevokedPasswordChanged)
	}
	_, err := f.svc.SignIn(ctx, app.SignInInput{Params: f.params(), Email: "grace@example.test", Password: goodPassword, ClientIP: clientIP})
	wantStatus(t, "sign-in with the old password", err, codes.InvalidArgument)
	if _, err := f.svc.SignIn(ctx, app.SignInInput{Params: f.params(), Email: "grace@example.test", Password: changedPassword, ClientIP: clientIP}); err != nil {
		t.Errorf("sign-in with the new password: %v", err)
	}
}

func TestChangingThePasswordNeedsAValidAccessToken(t *testing.T) {
	f := newFixture(t)
	f.session(t, "grace@example.test")
	err := f.changePassword(app.Tokens{AccessToken: "not.a.token"}, goodPassword, changedPassword)
	wantStatus(t, "forged token", err, codes.Unauthenticated)
}
