package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"google.golang.org/grpc/codes"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// totpCode is the authenticator's code for secret at t.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enrolTOTP signs email in (or up) on the account page's terms, enrols a TOTP factor with its
// first code and returns the secret and the recovery codes.
func (f *fixture) enrolTOTP(t *testing.T, email string) (secret string, codes []string) {
	t.Helper()
	ctx := context.Background()
	tok, _ := f.session(t, email)
	key, err := f.svc.StartTOTPEnrolment(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	codes, err = f.svc.ConfirmTOTPEnrolment(ctx, tok.AccessToken, totpCode(t, key.Secret(), f.now), goodPassword, clientIP)
	if err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute) // the enrolment's code is used; later ones are fresh
	return key.Secret(), codes
}

// secondStep signs email in with the password and returns the flow of the second step.
func (f *fixture) secondStep(t *testing.T, email string) app.LoginOutcome {
	t.Helper()
	out, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: email, Password: goodPassword, ClientIP: clientIP})
	if err != nil {
		t.Fatal(err)
	}
	if out.URL != "" || out.SecondFactor == "" {
		t.Fatalf("sign-in of a user with a second factor = %+v, want a second step", out)
	}
	return out
}

func (f *fixture) verify(flow, code string) (app.LoginOutcome, error) {
	return f.svc.VerifySecondFactor(context.Background(), app.SecondFactorInput{Flow: flow, Code: code, ClientIP: clientIP})
}

func TestEnrollingTOTPNeedsItsFirstCodeAndAnswersTenRecoveryCodes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, _ := f.session(t, "grace@example.test")
	key, err := f.svc.StartTOTPEnrolment(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key.URL(), "otpauth://totp/") || key.Issuer() != "app" || key.AccountName() != "grace@example.test" {
		t.Errorf("key = %s", key.URL())
	}
	again, err := f.svc.StartTOTPEnrolment(ctx, tok.AccessToken)
	if err != nil || again.Secret() != key.Secret() {
		t.Errorf("a reload within the enrolment shows another secret: %v", err)
	}
	// Until it is confirmed, the factor is not asked for.
	if url, err := f.signIn("grace@example.test", goodPassword); err != nil || url == "" {
		t.Fatalf("sign-in during a pending enrolment = %q, %v; want the app", url, err)
	}
	_, err = f.svc.ConfirmTOTPEnrolment(ctx, tok.AccessToken, "000000", goodPassword, clientIP)
	wantStatus(t, "a wrong first code", err, codes.InvalidArgument)
	// The right code with a wrong current password: a stolen access token adds no factor.
	_, err = f.svc.ConfirmTOTPEnrolment(ctx, tok.AccessToken, totpCode(t, key.Secret(), f.now), "not my password", clientIP)
	if fieldOf(err) != "current_password" {
		t.Errorf("a wrong current password: %v, want a refusal of current_password", err)
	}
	if st, _ := f.svc.DescribeSecondFactors(ctx, tok.AccessToken); st.TOTP {
		t.Error("a wrong current password enrolled the factor")
	}
	f.drain(t)
	got, err := f.svc.ConfirmTOTPEnrolment(ctx, tok.AccessToken, totpCode(t, key.Secret(), f.now), goodPassword, clientIP)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != domain.RecoveryCodeCount {
		t.Errorf("%d recovery codes, want %d", len(got), domain.RecoveryCodeCount)
	}
	if evs := f.drain(t); !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventSecondFactorEnrolled}) {
		t.Errorf("events = %v", types(evs))
	}
	st, err := f.svc.DescribeSecondFactors(ctx, tok.AccessToken)
	if err != nil || !st.TOTP || st.RecoveryCodesLeft != domain.RecoveryCodeCount || st.Policy != domain.MFAOptional {
		t.Errorf("DescribeSecondFactors = %+v, %v", st, err)
	}
	_, err = f.svc.StartTOTPEnrolment(ctx, tok.AccessToken)
	wantStatus(t, "a second enrolment", err, codes.FailedPrecondition)
}

func TestSignInWithATOTPFactorAsksForTheCodeAndTheTokensSayMFA(t *testing.T) {
	f := newFixture(t)
	secret, _ := f.enrolTOTP(t, "grace@example.test")
	out := f.secondStep(t, "grace@example.test")
	if out.Enrol {
		t.Error("a user with a factor is asked to enrol")
	}
	done, err := f.verify(out.SecondFactor, totpCode(t, secret, f.now))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.exchange(query(t, done.URL).Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"pwd", "otp", "mfa"}
	if got := claimsOf(t, tok.AccessToken, 1)["amr"]; !slices.Equal(got.([]any), want) {
		t.Errorf("access token amr = %v, want %v", got, want)
	}
	id := claimsOf(t, tok.IDToken, 1)
	if !slices.Equal(id["amr"].([]any), want) || id["acr"] != domain.ACRMultiFactor {
		t.Errorf("ID token amr = %v, acr = %v", id["amr"], id["acr"])
	}
	refreshed, err := f.refresh(tok.RefreshToken, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := claimsOf(t, refreshed.IDToken, 1)["acr"]; got != domain.ACRMultiFactor {
		t.Errorf("a refresh forgot the second factor: acr = %v", got)
	}
	// The flow is single use.
	_, err = f.verify(out.SecondFactor, totpCode(t, secret, f.now.Add(30*time.Second)))
	if fieldOf(err) != "flow" {
		t.Errorf("a used flow: %v, want a refusal of the flow", err)
	}
}

func TestAPasswordOnlySignInSaysSingleFactor(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.session(t, "grace@example.test")
	if got := claimsOf(t, tok.AccessToken, 1)["amr"]; !slices.Equal(got.([]any), []any{"pwd"}) {
		t.Errorf("amr = %v", got)
	}
	if got := claimsOf(t, tok.IDToken, 1)["acr"]; got != domain.ACRSingleFactor {
		t.Errorf("acr = %v", got)
	}
}

func TestATOTPCodeIsNeverAcceptedTwice(t *testing.T) {
	f := newFixture(t)
	secret, _ := f.enrolTOTP(t, "grace@example.test")
	code := totpCode(t, secret, f.now)
	if _, err := f.verify(f.secondStep(t, "grace@example.test").SecondFactor, code); err != nil {
		t.Fatal(err)
	}
	// Someone who watched the code type it into a second sign-in within the same 30 seconds.
	_, err := f.verify(f.secondStep(t, "grace@example.test").SecondFactor, code)
	if fieldOf(err) != "code" {
		t.Fatalf("a replayed code: %v, want a refused code", err)
	}
	f.now = f.now.Add(30 * time.Second)
	if _, err := f.verify(f.secondStep(t, "grace@example.test").SecondFactor, totpCode(t, secret, f.now)); err != nil {
		t.Errorf("the next step's code: %v", err)
	}
}

func TestARecoveryCodeSignsInOnceAndIsRefusedTheSecondTime(t *testing.T) {
	f := newFixture(t)
	_, recovery := f.enrolTOTP(t, "grace@example.test")
	f.drain(t)
	if _, err := f.verify(f.secondStep(t, "grace@example.test").SecondFactor, strings.ToUpper(recovery[2])); err != nil {
		t.Fatal(err)
	}
	evs := f.drain(t)
	if !slices.Contains(types(evs), identityv1.EventSecondFactorRecoveryCodeUsed) {
		t.Errorf("events = %v, want a recovery_code_used", types(evs))
	}
	_, err := f.verify(f.secondStep(t, "grace@example.test").SecondFactor, recovery[2])
	if fieldOf(err) != "code" {
		t.Errorf("a used recovery code: %v, want a refused code", err)
	}
	tok, _ := f.session(t, "lin@example.test") // another user, no factor: signs in at once
	if tok.AccessToken == "" {
		t.Error("a user without a factor got no tokens")
	}
}

func TestWrongSecondFactorCodesKillTheFlowAndCountAsFailedSignIns(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerEmailAddress: 8} })
	secret, _ := f.enrolTOTP(t, "grace@example.test")
	flow := f.secondStep(t, "grace@example.test").SecondFactor
	for i := range domain.MaxCodeAttempts {
		if _, err := f.verify(flow, "000000"); fieldOf(err) != "code" {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
	}
	_, err := f.verify(flow, totpCode(t, secret, f.now))
	if fieldOf(err) != "flow" {
		t.Errorf("the right code after %d wrong ones: %v, want the flow refused", domain.MaxCodeAttempts, err)
	}
	// A right password does not wipe the wrong codes (or each sign-in would buy five more
	// guesses): after five of the eight failures, three more wrong codes reach the limit.
	flow = f.secondStep(t, "grace@example.test").SecondFactor
	for range 3 {
		_, _ = f.verify(flow, "000000")
	}
	_, err = f.signIn("grace@example.test", goodPassword)
	wantStatus(t, "a sign-in after too many wrong codes", err, codes.ResourceExhausted)
}

func TestTheRequiredPolicyEnrolsAtSignInAndAnswersRecoveryCodesWithTheRedirect(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.session(t, "grace@example.test")
	if _, err := f.svc.SetAppMFA(ctx, f.app.ID, "required"); err != nil {
		t.Fatal(err)
	}
	out := f.secondStep(t, "grace@example.test")
	if !out.Enrol {
		t.Fatal("a user without a factor under the required policy is not asked to enrol")
	}
	key, err := f.svc.StartSignInEnrolment(ctx, out.SecondFactor)
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.verify(out.SecondFactor, totpCode(t, key.Secret(), f.now))
	if err != nil {
		t.Fatal(err)
	}
	if done.URL == "" || len(done.RecoveryCodes) != domain.RecoveryCodeCount {
		t.Errorf("enrolment at sign-in = %+v", done)
	}
	f.now = f.now.Add(time.Minute)
	if next := f.secondStep(t, "grace@example.test"); next.Enrol {
		t.Error("the next sign-in enrols again")
	}
	// Under "off" nobody is asked, factors or not.
	if _, err := f.svc.SetAppMFA(ctx, f.app.ID, "off"); err != nil {
		t.Fatal(err)
	}
	if url, err := f.signIn("grace@example.test", goodPassword); err != nil || url == "" {
		t.Errorf("sign-in under off = %q, %v", url, err)
	}
	_, err = f.svc.SetAppMFA(ctx, f.app.ID, "sometimes")
	wantInvalid(t, err, "policy")
}

func TestRemovingSecondFactorsEndsTheSessionsMailsTheUserAndSignInAsksOnlyThePassword(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.enrolTOTP(t, "grace@example.test")
	_, u := f.session(t, "lin@example.test") // a session of another user survives
	grace, err := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	mails := f.mailer.count()
	if err := f.svc.RemoveSecondFactors(ctx, f.app.ID, grace.ID, app.RemovedByApp); err != nil {
		t.Fatal(err)
	}
	evs := f.drain(t)
	if !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventSecondFactorRemoved, identityv1.EventSessionsRevoked}) {
		t.Errorf("events = %v", types(evs))
	}
	if f.mailer.count() != mails+1 || f.mailer.last(t).To != "grace@example.test" {
		t.Errorf("no mail to the user")
	}
	if url, err := f.signIn("grace@example.test", goodPassword); err != nil || url == "" {
		t.Errorf("sign-in after the removal = %q, %v; want the app", url, err)
	}
	if len(f.sessions(t, u.ID, "")) != 1 {
		t.Error("another user's session ended")
	}
	err = f.svc.RemoveSecondFactors(ctx, f.app.ID, "not-a-uuid", app.RemovedByApp)
	wantInvalid(t, err, "userId")
	err = f.svc.RemoveSecondFactors(ctx, f.app.ID, "0b1c7a52-62a8-4a5e-9d58-0a1f4e1c5a11", app.RemovedByApp)
	if !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("an unknown user: %v", err)
	}
}

func TestAPasswordResetOfAUserWithASecondFactorLeadsBackToSignInInsteadOfSigningIn(t *testing.T) {
	f := newFixture(t)
	f.enrolTOTP(t, "grace@example.test")
	r := f.startReset(t, "grace@example.test", 1)
	target, err := f.completeReset(app.ResetProof{Link: r.link}, changedPassword)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(target, "https://berth.test/login?") || query(t, target).Get("code") != "" {
		t.Errorf("reset of a user with a factor leads to %q, want the sign-in page", target)
	}
}
