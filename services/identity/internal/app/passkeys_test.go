package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/services/identity/internal/app"
)

func TestPasskeyOptionsNameThePublicHostAndTheAppAndExcludeNothingForANewUser(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.session(t, "grace@example.test")
	c, err := f.svc.StartPasskeyRegistration(context.Background(), tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	var opts struct {
		Challenge string `json:"challenge"`
		RP        struct{ ID, Name string }
		User      struct {
			Name string `json:"name"`
		} `json:"user"`
		Exclude []any `json:"excludeCredentials"`
	}
	if err := json.Unmarshal([]byte(c.Options), &opts); err != nil {
		t.Fatal(err)
	}
	if opts.RP.ID != "berth.test" || opts.RP.Name != "app" || opts.User.Name != "grace@example.test" || len(opts.Challenge) < 40 || len(opts.Exclude) != 0 {
		t.Errorf("registration options = %s", c.Options)
	}
	if c.State == "" || json.Valid([]byte(c.State)) {
		t.Errorf("the ceremony's state is not sealed: %q", c.State)
	}
}

func TestAPasskeyThatCannotBeVerifiedIsRefusedAsThePasskeyField(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, _ := f.session(t, "grace@example.test")
	c, err := f.svc.StartPasskeyRegistration(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := f.session(t, "lin@example.test")
	for name, in := range map[string]struct{ token, credential, state string }{
		"not JSON":                   {tok.AccessToken, "not json", c.State},
		"an empty credential":        {tok.AccessToken, "{}", c.State},
		"a forged state":             {tok.AccessToken, `{"id":"x"}`, "AAAA"},
		"another user's state":       {other.AccessToken, `{"id":"x"}`, c.State},
		"a state that is not base64": {tok.AccessToken, `{"id":"x"}`, "%%%"},
	} {
		_, err := f.svc.FinishPasskeyRegistration(ctx, app.PasskeyRegistration{
			AccessToken: in.token, Credential: in.credential, State: in.state, Current: goodPassword, ClientIP: clientIP,
		})
		if fieldOf(err) != "passkey" {
			t.Errorf("%s: %v, want a refusal of the passkey", name, err)
		}
	}
	_, err = f.svc.FinishPasskeyRegistration(ctx, app.PasskeyRegistration{
		AccessToken: tok.AccessToken, Credential: `{"id":"x"}`, State: c.State, Current: "not my password", ClientIP: clientIP,
	})
	if fieldOf(err) != "current_password" {
		t.Errorf("a wrong current password: %v, want a refusal of current_password", err)
	}
}

func TestASignInWithoutPasskeysGetsNoPasskeyOptionsAndAForgedAssertionCountsAsAWrongCode(t *testing.T) {
	// The enrolment's password check cleared the failures before (f.session's first sign-in found
	// no user): the three forged assertions alone reach the limit.
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerEmailAddress: 3} })
	f.enrolTOTP(t, "grace@example.test")
	flow := f.secondStep(t, "grace@example.test").SecondFactor
	c, err := f.svc.StartPasskeyAssertion(context.Background(), flow)
	if err != nil || c.Options != "" || c.State != "" {
		t.Errorf("assertion options of a user without passkeys = %+v, %v", c, err)
	}
	for range 3 {
		_, err := f.svc.VerifySecondFactor(context.Background(), app.SecondFactorInput{Flow: flow, Passkey: `{"id":"x"}`, PasskeyState: "AAAA", ClientIP: clientIP})
		if fieldOf(err) != "code" {
			t.Fatalf("a forged assertion: %v, want a refused code", err)
		}
	}
	_, err = f.signIn("grace@example.test", goodPassword)
	wantStatus(t, "a sign-in after three forged assertions", err, codes.ResourceExhausted)
}

func TestPasskeysAreRefusedWhileTheAppTurnsSecondFactorsOff(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.session(t, "grace@example.test")
	if _, err := f.svc.SetAppMFA(context.Background(), f.app.ID, "off"); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.StartPasskeyRegistration(context.Background(), tok.AccessToken)
	wantStatus(t, "passkey registration under off", err, codes.FailedPrecondition)
}

func TestPasskeySignInIsOfferedOnlyWhereTheAppAllowsItAndAForgedOneCountsAgainstTheAddress(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerIP: 2} })
	ctx := context.Background()
	if f.svc.OffersPasskeySignIn(f.app) {
		t.Error("a new app offers passkey sign-in")
	}
	_, err := f.svc.StartPasskeySignIn(ctx, f.params())
	wantStatus(t, "passkey sign-in of an app that does not allow it", err, codes.FailedPrecondition)
	a, err := f.svc.SetAppPasskeySignIn(ctx, f.app.ID, true)
	if err != nil || !a.PasskeySignIn || !f.svc.OffersPasskeySignIn(a) {
		t.Fatalf("SetAppPasskeySignIn = %+v, %v", a.PasskeySignIn, err)
	}
	c, err := f.svc.StartPasskeySignIn(ctx, f.params())
	if err != nil || c.Options == "" || c.State == "" {
		t.Fatalf("StartPasskeySignIn = %+v, %v", c, err)
	}
	var opts struct {
		UserVerification string `json:"userVerification"`
		Allow            []any  `json:"allowCredentials"`
	}
	if err := json.Unmarshal([]byte(c.Options), &opts); err != nil || opts.UserVerification != "required" || len(opts.Allow) != 0 {
		t.Errorf("sign-in options = %s (%v), want user verification required and any credential", c.Options, err)
	}
	for range 2 {
		_, err := f.svc.PasskeySignIn(ctx, app.PasskeySignInInput{Params: f.params(), Passkey: `{"id":"x"}`, State: c.State, ClientIP: clientIP})
		if fieldOf(err) != "passkey" {
			t.Fatalf("a forged assertion: %v, want a refusal of the passkey", err)
		}
	}
	_, err = f.svc.PasskeySignIn(ctx, app.PasskeySignInInput{Params: f.params(), Passkey: `{"id":"x"}`, State: c.State, ClientIP: clientIP})
	wantStatus(t, "a third forged assertion from one address", err, codes.ResourceExhausted)
	if _, err := f.svc.SetAppMFA(ctx, f.app.ID, "off"); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.StartPasskeySignIn(ctx, f.params())
	wantStatus(t, "passkey sign-in while second factors are off", err, codes.FailedPrecondition)
}

// Under the required policy a user without a factor may enrol a passkey at sign-in instead of an
// authenticator app: the flow answers creation options bound to it; a sign-in that need not enrol
// gets none, and a forged credential enrols nothing and counts as a wrong code.
func TestAnEnrollingSignInOffersAPasskeyBoundToItsFlow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, grace := f.session(t, "grace@example.test")
	f.enrolTOTP(t, "lin@example.test")
	if _, err := f.svc.SetAppMFA(ctx, f.app.ID, "required"); err != nil {
		t.Fatal(err)
	}
	out := f.secondStep(t, "grace@example.test")
	c, err := f.svc.StartSignInPasskeyEnrolment(ctx, out.SecondFactor)
	var opts struct {
		RP   struct{ ID string }
		User struct {
			Name string `json:"name"`
		} `json:"user"`
	}
	if err != nil || json.Unmarshal([]byte(c.Options), &opts) != nil || opts.RP.ID != "berth.test" || opts.User.Name != "grace@example.test" || c.State == "" {
		t.Fatalf("enrolment options = %+v, %v", c, err)
	}
	_, err = f.svc.VerifySecondFactor(ctx, app.SecondFactorInput{Flow: out.SecondFactor, Passkey: `{"id":"x"}`, PasskeyState: c.State, ClientIP: clientIP})
	if fieldOf(err) != "code" {
		t.Errorf("a forged credential: %v, want a refused code", err)
	}
	if factors, err := f.store.ListFactors(ctx, f.app.ID, grace.ID); err != nil || len(factors) != 0 {
		t.Errorf("a forged credential left factors %v (%v)", factors, err)
	}
	if _, err := f.svc.StartSignInPasskeyEnrolment(ctx, "not-a-flow"); fieldOf(err) != "flow" {
		t.Errorf("options for a forged flow: %v, want the spent flow", err)
	}
	other := f.secondStep(t, "lin@example.test")
	if _, err := f.svc.StartSignInPasskeyEnrolment(ctx, other.SecondFactor); fieldOf(err) != "flow" {
		t.Errorf("options for a sign-in that need not enrol: %v, want the spent flow", err)
	}
}
