package app_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/testkit/passkeytest"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// newAuthenticator is a software authenticator for the fixture's public URL.
func newAuthenticator(t *testing.T) *passkeytest.Authenticator {
	t.Helper()
	a, err := passkeytest.New("https://berth.test")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// addMemberPasskey registers a passkey of authenticator k named name for the principal's account
// and answers the recovery codes the registration brought.
func (f *fixture) addMemberPasskey(t *testing.T, p authn.Principal, k *passkeytest.Authenticator, name string) []string {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.StartMemberPasskeyRegistration(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := k.Create(c.Options)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := f.svc.FinishMemberPasskeyRegistration(ctx, p, app.MemberPasskeyRegistration{Name: name, Credential: cred, State: c.State, Current: memberPassword})
	if err != nil {
		t.Fatalf("FinishMemberPasskeyRegistration: %v", err)
	}
	return codes
}

// memberChallenge signs email in with memberPassword and answers the challenge of its second
// factor.
func (f *fixture) memberChallenge(t *testing.T, email string) app.MemberSignIn {
	t.Helper()
	out, err := f.svc.SignInMember(context.Background(), email, memberPassword, browserOf)
	if err != nil || out.Token != "" || out.Challenge == "" {
		t.Fatalf("sign-in of a guarded account = %+v, %v, want a challenge", out, err)
	}
	return out
}

// assertion answers the challenge's passkey ceremony with authenticator k.
func (f *fixture) assertion(t *testing.T, challenge string, k *passkeytest.Authenticator) (passkey, state string) {
	t.Helper()
	c, err := f.svc.StartMemberPasskeyAssertion(context.Background(), challenge)
	if err != nil || c.Options == "" {
		t.Fatalf("StartMemberPasskeyAssertion = %+v, %v, want options", c, err)
	}
	passkey, err = k.Get(c.Options)
	if err != nil {
		t.Fatal(err)
	}
	return passkey, c.State
}

func TestAMemberRegistersNamedPasskeysAndOnlyTheFirstSecondFactorBringsRecoveryCodes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "ada@example.test").Token)
	c, err := f.svc.StartMemberPasskeyRegistration(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var opts struct {
		RP   struct{ ID, Name string }
		User struct {
			Name string `json:"name"`
		} `json:"user"`
	}
	if err := json.Unmarshal([]byte(c.Options), &opts); err != nil || opts.RP.ID != "berth.test" || opts.RP.Name != "Berth console" || opts.User.Name != "ada@example.test" {
		t.Errorf("registration options = %s (%v), want the console on the public host for the account", c.Options, err)
	}
	laptop := newAuthenticator(t)
	good, err := laptop.Create(c.Options)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		in    app.MemberPasskeyRegistration
		field string
	}{
		{"no name", app.MemberPasskeyRegistration{Name: "  ", Credential: good, State: c.State, Current: memberPassword}, "name"},
		{"a name too long", app.MemberPasskeyRegistration{Name: string(make([]byte, 65)), Credential: good, State: c.State, Current: memberPassword}, "name"},
		{"a wrong password", app.MemberPasskeyRegistration{Name: "Laptop", Credential: good, State: c.State, Current: "not-my-password"}, "current_password"},
		{"a forged credential", app.MemberPasskeyRegistration{Name: "Laptop", Credential: `{"id":"x"}`, State: c.State, Current: memberPassword}, "passkey"},
		{"a forged state", app.MemberPasskeyRegistration{Name: "Laptop", Credential: good, State: "AAAA", Current: memberPassword}, "passkey"},
	} {
		_, err := f.svc.FinishMemberPasskeyRegistration(ctx, p, c.in)
		if fieldOf(err) != c.field {
			t.Errorf("%s: %v, want a refusal of %s", c.name, err, c.field)
		}
	}
	if list, _ := f.svc.ListMemberFactors(ctx, p); len(list) != 0 {
		t.Fatalf("refused registrations stored %+v", list)
	}

	// Another account's registration state does not register here.
	other := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "bo@example.test").Token)
	oc, err := f.svc.StartMemberPasskeyRegistration(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := newAuthenticator(t).Create(oc.Options)
	_, err = f.svc.FinishMemberPasskeyRegistration(ctx, p, app.MemberPasskeyRegistration{Name: "Stolen", Credential: foreign, State: oc.State, Current: memberPassword})
	wantInvalid(t, err, "passkey")

	codes, err := f.svc.FinishMemberPasskeyRegistration(ctx, p, app.MemberPasskeyRegistration{Name: " Laptop ", Credential: good, State: c.State, Current: memberPassword})
	if err != nil || len(codes) != domain.RecoveryCodeCount {
		t.Fatalf("first passkey = %v, %v, want the recovery codes", codes, err)
	}
	f.now = f.now.Add(time.Minute) // listed after the first
	if again := f.addMemberPasskey(t, p, newAuthenticator(t), "Phone"); len(again) != 0 {
		t.Errorf("a second passkey answered codes %v", again)
	}
	list, err := f.svc.ListMemberFactors(ctx, p)
	if err != nil || len(list) != 2 || list[0].Name != "Laptop" || list[1].Name != "Phone" || list[0].Kind != domain.FactorPasskey {
		t.Fatalf("ListMemberFactors = %+v, %v", list, err)
	}
	next, _ := f.svc.StartMemberPasskeyRegistration(ctx, p)
	var excl struct {
		Exclude []any `json:"excludeCredentials"`
	}
	if err := json.Unmarshal([]byte(next.Options), &excl); err != nil || len(excl.Exclude) != 2 {
		t.Errorf("registration options exclude %d passkeys, want the account's 2", len(excl.Exclude))
	}
	if prof, _ := f.svc.DescribeMember(ctx, p); !prof.SecondFactor {
		t.Error("profile does not show the second factor")
	}
	if out := f.memberChallenge(t, "ada@example.test"); !slices.Equal(out.Factors, []domain.FactorKind{domain.FactorPasskey}) {
		t.Errorf("sign-in offers %v, want passkey", out.Factors)
	}
	// The account's recovery codes are the first passkey's.
	out, err := f.svc.VerifyMemberSecondFactor(ctx, f.memberChallenge(t, "ada@example.test").Challenge, codes[0], browserOf)
	if err != nil || out.Token == "" {
		t.Errorf("a recovery code of the first passkey = %+v, %v", out, err)
	}
}

func TestAPasskeyFinishesTheConsoleSignInOnlyForItsOwnChallengeAndOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "ada@example.test").Token)
	key := newAuthenticator(t)
	f.addMemberPasskey(t, p, key, "Laptop")

	ch := f.memberChallenge(t, "ada@example.test").Challenge
	passkey, state := f.assertion(t, ch, key)
	out, err := f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: passkey, State: state, Client: browserOf})
	if err != nil || out.Token == "" {
		t.Fatalf("a good assertion = %+v, %v, want a session", out, err)
	}
	f.principalOf(t, out.Token)
	list, _ := f.svc.ListMemberFactors(ctx, p)
	if list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(f.now) || list[0].LastStep != int64(key.Counter) {
		t.Errorf("used passkey = %+v, want last used now with counter %d", list[0], key.Counter)
	}

	for _, c := range []struct {
		name string
		// attempt answers the challenge, assertion and state to post.
		attempt func(t *testing.T) (string, string, string)
		field   string
	}{
		{"the used challenge again", func(*testing.T) (string, string, string) { return ch, passkey, state }, "challenge"},
		{"a replayed assertion on a new challenge", func(t *testing.T) (string, string, string) {
			return f.memberChallenge(t, "ada@example.test").Challenge, passkey, state
		}, "passkey"},
		{"another challenge's ceremony", func(t *testing.T) (string, string, string) {
			first, second := f.memberChallenge(t, "ada@example.test").Challenge, f.memberChallenge(t, "ada@example.test").Challenge
			pk, st := f.assertion(t, first, key)
			return second, pk, st
		}, "passkey"},
		{"a counter that fell back", func(t *testing.T) (string, string, string) {
			next := f.memberChallenge(t, "ada@example.test").Challenge
			key.Counter -= 2 // the next assertion carries the counter already used
			pk, st := f.assertion(t, next, key)
			key.Counter += 5
			return next, pk, st
		}, "passkey"},
		{"a passkey the account does not hold", func(t *testing.T) (string, string, string) {
			next := f.memberChallenge(t, "ada@example.test").Challenge
			pk, st := f.assertion(t, next, newAuthenticator(t))
			return next, pk, st
		}, "passkey"},
		{"a forged state", func(t *testing.T) (string, string, string) {
			next := f.memberChallenge(t, "ada@example.test").Challenge
			pk, _ := f.assertion(t, next, key)
			return next, pk, "AAAA"
		}, "passkey"},
		{"an unknown challenge", func(*testing.T) (string, string, string) { return "not-a-challenge", passkey, state }, "challenge"},
	} {
		t.Run(c.name, func(t *testing.T) {
			challenge, pk, st := c.attempt(t)
			_, err := f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: challenge, Passkey: pk, State: st, Client: browserOf})
			wantInvalid(t, err, c.field)
		})
	}

	// The counter check left the authenticator's next assertion good.
	ch = f.memberChallenge(t, "ada@example.test").Challenge
	pk, st := f.assertion(t, ch, key)
	if out, err := f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: pk, State: st, Client: browserOf}); err != nil || out.Token == "" {
		t.Errorf("the next good assertion = %+v, %v", out, err)
	}
}

func TestARemovedPasskeyNoLongerSignsInAndTheLastOneTurnsTheSecondFactorOff(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "ada@example.test").Token)
	laptop, phone := newAuthenticator(t), newAuthenticator(t)
	f.addMemberPasskey(t, p, laptop, "Laptop")
	f.now = f.now.Add(time.Minute) // listed after the first
	f.addMemberPasskey(t, p, phone, "Phone")
	list, _ := f.svc.ListMemberFactors(ctx, p)
	if len(list) != 2 || list[0].Name != "Laptop" {
		t.Fatalf("ListMemberFactors = %+v", list)
	}

	// A ceremony started before the removal is refused after it.
	ch := f.memberChallenge(t, "ada@example.test").Challenge
	pk, st := f.assertion(t, ch, laptop)
	err := f.svc.RemoveMemberPasskey(ctx, p, list[0].ID, "not-my-password")
	wantInvalid(t, err, "current_password")
	wantInvalid(t, f.svc.RemoveMemberPasskey(ctx, p, "not-an-id", memberPassword), "passkeyId")
	other := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "bo@example.test").Token)
	wantStatus(t, "another account removes the passkey", f.svc.RemoveMemberPasskey(ctx, other, list[0].ID, memberPassword), codes.NotFound)
	if err := f.svc.RemoveMemberPasskey(ctx, p, list[0].ID, memberPassword); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: pk, State: st, Client: browserOf})
	wantInvalid(t, err, "passkey")
	ch = f.memberChallenge(t, "ada@example.test").Challenge
	pk, st = f.assertion(t, ch, phone)
	if out, err := f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: pk, State: st, Client: browserOf}); err != nil || out.Token == "" {
		t.Fatalf("the passkey left = %+v, %v", out, err)
	}

	if err := f.svc.RemoveMemberPasskey(ctx, p, list[1].ID, memberPassword); err != nil {
		t.Fatal(err)
	}
	out, err := f.svc.SignInMember(ctx, "ada@example.test", memberPassword, browserOf)
	if err != nil || out.Token == "" {
		t.Errorf("sign-in without second factors = %+v, %v, want a session at once", out, err)
	}
}

func TestForgedPasskeysKillTheChallengeAndCountUnderTheSignInLimits(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "ada@example.test").Token)
	key := newAuthenticator(t)
	f.addMemberPasskey(t, p, key, "Laptop")
	ch := f.memberChallenge(t, "ada@example.test").Challenge
	pk, st := f.assertion(t, ch, key)
	for range domain.MaxCodeAttempts {
		_, err := f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: `{"id":"x"}`, State: st, Client: browserOf})
		wantInvalid(t, err, "passkey")
	}
	_, err := f.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: pk, State: st, Client: browserOf})
	wantInvalid(t, err, "challenge")
	_, err = f.svc.StartMemberPasskeyAssertion(ctx, ch)
	wantInvalid(t, err, "challenge")

	limited := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{PerEmailAddress: 3} })
	lp := limited.principalOf(t, limited.consoleMember(t, limited.app.ProjectID, "ada@example.test").Token)
	limited.addMemberPasskey(t, lp, newAuthenticator(t), "Laptop")
	ch = limited.memberChallenge(t, "ada@example.test").Challenge
	for range 3 {
		_, err := limited.svc.VerifyMemberPasskey(ctx, app.MemberPasskeyInput{Challenge: ch, Passkey: `{"id":"x"}`, State: "AAAA", Client: browserOf})
		wantInvalid(t, err, "passkey")
	}
	_, err = limited.svc.SignInMember(ctx, "ada@example.test", memberPassword, browserOf)
	wantStatus(t, "a sign-in after three forged passkeys", err, codes.ResourceExhausted)
}

func TestAMemberWithoutPasskeysGetsNoAssertionOptions(t *testing.T) {
	f := newFixture(t)
	p := f.principalOf(t, f.consoleMember(t, f.app.ProjectID, "ada@example.test").Token)
	key, err := f.svc.StartMemberTotp(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ConfirmMemberTotp(context.Background(), p, totpCode(t, key.Secret(), f.now), memberPassword); err != nil {
		t.Fatal(err)
	}
	out := f.memberChallenge(t, "ada@example.test")
	if !slices.Equal(out.Factors, []domain.FactorKind{domain.FactorTOTP}) {
		t.Errorf("sign-in offers %v, want totp", out.Factors)
	}
	c, err := f.svc.StartMemberPasskeyAssertion(context.Background(), out.Challenge)
	if err != nil || c.Options != "" || c.State != "" {
		t.Errorf("assertion options of an account without passkeys = %+v, %v", c, err)
	}
}

func TestAPublicURLOnAnIPAddressMakesPasskeysUnavailableRatherThanFailing(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.PublicURL = "http://127.0.0.1:8080" })
	tok, _ := f.session(t, "grace@example.test")
	_, err := f.svc.StartPasskeyRegistration(context.Background(), tok.AccessToken)
	wantStatus(t, "passkey registration on an IP address", err, codes.Unavailable)
}
