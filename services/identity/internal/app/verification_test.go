package app_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/mail"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// requireVerification switches the fixture's app to the required policy.
func (f *fixture) requireVerification(t *testing.T) {
	t.Helper()
	a, err := f.svc.SetAppEmailVerification(context.Background(), f.app.ID, "required")
	if err != nil {
		t.Fatal(err)
	}
	f.app = a
}

func (f *fixture) signUpOutcome(t *testing.T, email, pw string) app.LoginOutcome {
	t.Helper()
	out, err := f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: email, Password: pw, ClientIP: clientIP})
	if err != nil {
		t.Fatalf("SignUp(%s): %v", email, err)
	}
	return out
}

var (
	mailLink = regexp.MustCompile(`https://berth\.test/login/verify\?token=[A-Za-z0-9_%-]+`)
	mailCode = regexp.MustCompile(`(?m)^([0-9]{6})$`)
)

// secretsOf reads the link's token and the code from a verification mail's text part.
func secretsOf(t *testing.T, m mail.Message) (token, code string) {
	t.Helper()
	link := mailLink.FindString(m.Text)
	c := mailCode.FindStringSubmatch(m.Text)
	if link == "" || c == nil {
		t.Fatalf("no link or code in the mail:\n%s", m.Text)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.HTML, u.Query().Get("token")) || !strings.Contains(m.HTML, c[1]) {
		t.Fatalf("the HTML part lacks the link or code:\n%s", m.HTML)
	}
	return u.Query().Get("token"), c[1]
}

func (f *fixture) userByEmail(t *testing.T, email string) domain.User {
	t.Helper()
	u, err := f.store.GetUserByEmail(context.Background(), f.app.ID, email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestNewAppsRequireVerificationAndThePolicyIsSetByTheAdminAPI(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "new", RedirectURIs: []string{"https://app.test/cb"}})
	if err != nil || a.EmailVerification != domain.VerificationRequired {
		t.Fatalf("new app: %v, %v; want the required policy", a.EmailVerification, err)
	}
	got, err := f.svc.SetAppEmailVerification(ctx, a.ID, "optional")
	if err != nil || got.EmailVerification != domain.VerificationOptional {
		t.Fatalf("set optional: %v, %v", got.EmailVerification, err)
	}
	for _, bad := range []string{"", "Required", "off", "required\x00"} {
		_, err := f.svc.SetAppEmailVerification(ctx, a.ID, bad)
		wantInvalid(t, err, "policy")
	}
	_, err = f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "bad", EmailVerification: "sometimes"})
	wantInvalid(t, err, "emailVerification")
}

func TestSignUpUnderRequiredPolicyMailsALinkAndACodeInsteadOfSigningIn(t *testing.T) {
	f := newFixture(t)
	f.requireVerification(t)
	f.drain(t)
	out := f.signUpOutcome(t, "new@example.test", goodPassword)
	if out.URL != "" || !domain.IsUUID(out.Verification) {
		t.Fatalf("outcome = %+v, want a verification and no redirect", out)
	}
	m := f.mailer.last(t)
	if m.To != "new@example.test" || m.Subject != "Confirm your email address for app" {
		t.Fatalf("mail to %q, subject %q", m.To, m.Subject)
	}
	secretsOf(t, m)
	if u := f.userByEmail(t, "new@example.test"); u.EmailVerified || u.LastSignInAt != nil {
		t.Fatalf("user after sign-up: verified %v, signed in %v", u.EmailVerified, u.LastSignInAt)
	}
	for _, typ := range types(f.drain(t)) {
		if typ == identityv1.EventUserSignedIn {
			t.Fatal("sign-up under the required policy signed the user in")
		}
	}
}

// A registered address gets the outcome a new one gets, after the same password hash, and its
// owner a notice; nothing of the account changes.
func TestSignUpWithARegisteredAddressAnswersLikeANewOne(t *testing.T) {
	argon, err := password.NewHasher(cheapPasswords)
	if err != nil {
		t.Fatal(err)
	}
	h := &countingHasher{real: argon}
	f := newFixture(t, func(c *app.Config) { c.Hasher = h })
	f.requireVerification(t)
	before := f.userByEmail(t, "ada@example.test")

	hashes := h.calls.Load()
	fresh := f.signUpOutcome(t, "fresh@example.test", goodPassword)
	freshHashes := h.calls.Load() - hashes
	freshMail := f.mailer.last(t)
	taken := f.signUpOutcome(t, "ADA@example.test", "another good password")
	takenHashes := h.calls.Load() - hashes - freshHashes
	notice := f.mailer.last(t)

	if taken.URL != "" || !domain.IsUUID(taken.Verification) || taken.Verification == fresh.Verification {
		t.Fatalf("registered address outcome = %+v, want a verification like %+v", taken, fresh)
	}
	if freshHashes != 1 || takenHashes != freshHashes {
		t.Fatalf("password hashes: new address %d, registered %d; want one each", freshHashes, takenHashes)
	}
	if notice.To != "ada@example.test" || !strings.Contains(notice.Text, "https://berth.test/login?") ||
		mailLink.MatchString(notice.Text) || notice.Subject == freshMail.Subject {
		t.Fatalf("notice to %q, subject %q:\n%s", notice.To, notice.Subject, notice.Text)
	}
	if after := f.userByEmail(t, "ada@example.test"); after.PasswordHash != before.PasswordHash || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatal("a sign-up with a registered address changed the account")
	}
	// Its code form answers as for any wrong code.
	_, err = f.svc.VerifyEmailCode(context.Background(), app.CodeInput{ClientID: f.app.ID, Verification: taken.Verification, Code: "123456"})
	wantSpent(t, err)
}

// waitRecorder stands in for time.After in the sign-up's answer-time wait: it records each wait
// and lets it end at once.
type waitRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (w *waitRecorder) after(d time.Duration) <-chan time.Time {
	w.mu.Lock()
	w.waits = append(w.waits, d)
	w.mu.Unlock()
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func (w *waitRecorder) take() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.waits
	w.waits = nil
	return got
}

func TestSignUpsOfNewAndRegisteredAddressesBothWaitOutTheAnswerTimeUnderTheRequiredPolicy(t *testing.T) {
	const answerAt = time.Hour // far above any sign-up's own work, so every one must wait
	w := &waitRecorder{}
	f := newFixture(t, func(c *app.Config) { c.SignUpAnswerTime, c.After = answerAt, w.after })
	waited := func(what string) {
		t.Helper()
		got := w.take()
		if len(got) != 1 || got[0] <= answerAt-time.Minute || got[0] > answerAt {
			t.Fatalf("%s waited %v; want one wait of nearly %v", what, got, answerAt)
		}
	}
	f.requireVerification(t)
	f.signUpOutcome(t, "fresh@example.test", goodPassword)
	waited("a new address")
	f.signUpOutcome(t, "ADA@example.test", "another good password")
	waited("a registered address")

	// The optional policy signs a new address in at once and refuses a registered one: its answers
	// differ anyway (the README says so), so it waits for nothing.
	if _, err := f.svc.SetAppEmailVerification(context.Background(), f.app.ID, "optional"); err != nil {
		t.Fatal(err)
	}
	f.signUpOutcome(t, "another@example.test", goodPassword)
	if got := w.take(); len(got) != 0 {
		t.Fatalf("an optional-policy sign-up waited %v", got)
	}
}

func wantSpent(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, domain.ErrChallengeSpent) {
		t.Fatalf("error = %v, want the one verification failure", err)
	}
	if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid {
		t.Fatalf("error = %v, want InvalidArgument", err)
	}
}

func TestVerifyingContinuesTheAuthorizationRequestAndMarksTheAddressVerified(t *testing.T) {
	for _, by := range []string{"code", "link"} {
		t.Run(by, func(t *testing.T) {
			f := newFixture(t)
			f.requireVerification(t)
			out := f.signUpOutcome(t, "new@example.test", goodPassword)
			token, code := secretsOf(t, f.mailer.last(t))
			f.drain(t)
			var (
				target string
				err    error
			)
			if by == "code" {
				target, err = f.svc.VerifyEmailCode(context.Background(), app.CodeInput{ClientID: f.app.ID, Verification: out.Verification, Code: code, ClientIP: clientIP})
			} else {
				target, err = f.svc.VerifyEmailLink(context.Background(), token, clientIP)
			}
			if err != nil {
				t.Fatal(err)
			}
			q := query(t, target)
			if !strings.HasPrefix(target, "https://app.test/cb?") || q.Get("state") != "state-1" || q.Get("code") == "" {
				t.Fatalf("verification led to %s, want the redirect URI with a code and the state", target)
			}
			got := types(f.drain(t))
			want := []string{string(identityv1.EventUserEmailVerified), string(identityv1.EventUserUpdated), string(identityv1.EventUserSignedIn)}
			if strings.Join(typeNames(got), " ") != strings.Join(want, " ") {
				t.Fatalf("events = %v, want %v", got, want)
			}
			tok, err := f.exchange(q.Get("code"))
			if err != nil {
				t.Fatal(err)
			}
			if claimsOf(t, tok.IDToken, 1)["email_verified"] != true {
				t.Fatal("the ID token after verification does not say email_verified")
			}
			if !f.userByEmail(t, "new@example.test").EmailVerified {
				t.Fatal("the user is not verified")
			}
			// Single use: neither secret works again.
			_, err = f.svc.VerifyEmailLink(context.Background(), token, clientIP)
			wantSpent(t, err)
			_, err = f.svc.VerifyEmailCode(context.Background(), app.CodeInput{ClientID: f.app.ID, Verification: out.Verification, Code: code})
			wantSpent(t, err)
		})
	}
}

func typeNames[T ~string](ts []T) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// Every way a verification cannot be met answers the same error, and wrong codes use up the
// verification.
func TestEveryFailedVerificationAnswersTheSame(t *testing.T) {
	otherDigit := func(code string) string {
		if code[0] == '9' {
			return "0" + code[1:]
		}
		return string(code[0]+1) + code[1:]
	}
	for _, c := range []struct {
		name string
		try  func(f *fixture, verification, token, code string) error
	}{
		{"wrong code", func(f *fixture, v, _, code string) error { return f.verifyCode(v, otherDigit(code)) }},
		{"malformed code", func(f *fixture, v, _, _ string) error { return f.verifyCode(v, "12a456") }},
		{"unknown verification", func(f *fixture, _, _, code string) error {
			return f.verifyCode(domain.CanonicalID("00000000-0000-4000-8000-000000000000"), code)
		}},
		{"verification of another app", func(f *fixture, v, _, code string) error {
			_, err := f.svc.VerifyEmailCode(context.Background(), app.CodeInput{ClientID: f.newApp(t).ID, Verification: v, Code: code})
			return err
		}},
		{"malformed link", func(f *fixture, _, token, _ string) error {
			_, err := f.svc.VerifyEmailLink(context.Background(), token+"x", "")
			return err
		}},
		{"expired", func(f *fixture, v, _, code string) error {
			f.now = f.now.Add(domain.PurposeVerifyEmail.TTL() + time.Second)
			return f.verifyCode(v, code)
		}},
		{"retired by a newer mail", func(f *fixture, v, _, code string) error {
			if _, err := f.svc.ResendVerification(context.Background(), app.ResendInput{Params: f.params(), Email: "new@example.test", ClientIP: clientIP}); err != nil {
				t.Fatal(err)
			}
			return f.verifyCode(v, code)
		}},
		{"right code after the attempts are used up", func(f *fixture, v, _, code string) error {
			for range domain.MaxCodeAttempts {
				_ = f.verifyCode(v, otherDigit(code))
			}
			return f.verifyCode(v, code)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.requireVerification(t)
			out := f.signUpOutcome(t, "new@example.test", goodPassword)
			token, code := secretsOf(t, f.mailer.last(t))
			wantSpent(t, c.try(f, out.Verification, token, code))
			if f.userByEmail(t, "new@example.test").EmailVerified {
				t.Fatal("a failed verification verified the address")
			}
		})
	}
}

func (f *fixture) verifyCode(verification, code string) error {
	_, err := f.svc.VerifyEmailCode(context.Background(), app.CodeInput{ClientID: f.app.ID, Verification: verification, Code: code})
	return err
}

// Under the required policy the right password of an unverified user mails a fresh verification
// and answers "check your inbox"; a wrong password answers as always.
func TestSignInOfAnUnverifiedUserMailsAVerificationInsteadOfSigningIn(t *testing.T) {
	f := newFixture(t)
	f.requireVerification(t)
	first := f.signUpOutcome(t, "new@example.test", goodPassword)
	_, firstCode := secretsOf(t, f.mailer.last(t))
	if _, err := f.signIn("new@example.test", "wrong password!"); err == nil {
		t.Fatal("a wrong password signed in")
	}
	sent := f.mailer.count()
	out, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: "new@example.test", Password: goodPassword, ClientIP: clientIP})
	if err != nil || out.URL != "" || !domain.IsUUID(out.Verification) || f.mailer.count() != sent+1 {
		t.Fatalf("sign-in of an unverified user = %+v, %v (mails %d -> %d)", out, err, sent, f.mailer.count())
	}
	_, code := secretsOf(t, f.mailer.last(t))
	wantSpent(t, f.verifyCode(first.Verification, firstCode)) // the newer mail retired the first
	if err := f.verifyCode(out.Verification, code); err != nil {
		t.Fatal(err)
	}
	if _, err := f.signIn("new@example.test", goodPassword); err != nil {
		t.Fatalf("sign-in after verification: %v", err)
	}
	// Verified users sign in as always, and users of optional apps are never asked.
	if redirect, err := f.signIn("ada@example.test", goodPassword); err == nil && redirect == "" {
		t.Fatal("a verified user got no redirect")
	}
}

func TestResendIsLimitedPerAddressAndPerClientAddressAndAnswersTheSameForEveryAddress(t *testing.T) {
	l := app.LoginLimits{ResendsPerEmail: 2, ResendsPerIP: 3, ResendWindow: time.Hour}
	resend := func(f *fixture, email, ip string) (app.LoginOutcome, error) {
		return f.svc.ResendVerification(context.Background(), app.ResendInput{Params: f.params(), Email: email, ClientIP: ip})
	}
	for _, c := range []struct {
		name  string
		calls []struct{ email, ip string }
		// exhausted is the index of the first call refused, -1 for none.
		exhausted int
	}{
		{"per address", []struct{ email, ip string }{{"new@example.test", "198.51.100.1"}, {"new@example.test", "198.51.100.2"}, {"NEW@example.test", "198.51.100.3"}}, 2},
		{"per client address", []struct{ email, ip string }{{"a@example.test", "198.51.100.1"}, {"b@example.test", "198.51.100.1"}, {"c@example.test", "198.51.100.1"}, {"d@example.test", "198.51.100.1"}}, 3},
		{"separate addresses and clients", []struct{ email, ip string }{{"a@example.test", "198.51.100.1"}, {"b@example.test", "198.51.100.2"}, {"a@example.test", "198.51.100.3"}}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(cfg *app.Config) { cfg.Limits = l })
			f.requireVerification(t)
			for i, call := range c.calls {
				_, err := resend(f, call.email, call.ip)
				if i == c.exhausted {
					if ft, ok := fault.As(err); !ok || ft.Kind() != fault.KindExhausted {
						t.Fatalf("call %d: %v, want the limit", i, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
		})
	}

	t.Run("only an unverified user gets a mail, every address the same answer", func(t *testing.T) {
		f := newFixture(t)
		f.requireVerification(t)
		f.signUpOutcome(t, "new@example.test", goodPassword)
		for _, email := range []string{"new@example.test", "ada@example.test", "nobody@example.test"} {
			sent := f.mailer.count()
			out, err := resend(f, email, clientIP)
			if err != nil || out.URL != "" || !domain.IsUUID(out.Verification) {
				t.Fatalf("resend to %s = %+v, %v", email, out, err)
			}
			wantMail := email == "new@example.test"
			if got := f.mailer.count() > sent; got != wantMail {
				t.Fatalf("resend to %s mailed: %v, want %v", email, got, wantMail)
			}
		}
		_, err := resend(f, "not an address", clientIP)
		wantInvalid(t, err, "email")
	})
}

// Under the optional policy sign-up signs in at once, and the mailed link only confirms.
func TestOptionalPolicySignsUpAtOnceAndTheMailVerifiesLater(t *testing.T) {
	f := newFixture(t)
	out := f.signUpOutcome(t, "new@example.test", goodPassword)
	if out.URL == "" || out.Verification != "" {
		t.Fatalf("outcome = %+v, want a redirect", out)
	}
	token, _ := secretsOf(t, f.mailer.last(t))
	target, err := f.svc.VerifyEmailLink(context.Background(), token, clientIP)
	if err != nil || target != "" {
		t.Fatalf("link = %q, %v; want a confirmation without a redirect", target, err)
	}
	if !f.userByEmail(t, "new@example.test").EmailVerified {
		t.Fatal("the link did not verify the address")
	}
	// A registered address is refused as before the policy existed.
	if _, err := f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: "ada@example.test", Password: goodPassword}); err == nil {
		t.Fatal("a registered address signed up again")
	}
}

func TestSignUpUnderRequiredPolicyWithoutAMailerIsUnavailable(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Mailer = nil })
	f.requireVerification(t)
	_, err := f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: "new@example.test", Password: goodPassword, ClientIP: clientIP})
	if ft, ok := fault.As(err); !ok || ft.Kind() != fault.KindUnavailable {
		t.Fatalf("error = %v, want Unavailable", err)
	}
}

// The account page's resend names the account callback: its mail confirms the address and
// continues nothing, since the page's own sign-in cannot be resumed from a mail.
func TestAResendFromTheAccountPageOnlyConfirmsTheAddress(t *testing.T) {
	f := newFixture(t)
	f.signUpOutcome(t, "new@example.test", goodPassword) // optional policy: signed up, unverified
	p := app.LoginParams{ClientID: f.app.ID, RedirectURI: accountCallback}
	out, err := f.svc.ResendVerification(context.Background(), app.ResendInput{Params: p, Email: "new@example.test", ClientIP: clientIP})
	if err != nil || out.Verification == "" {
		t.Fatalf("resend = %+v, %v", out, err)
	}
	token, _ := secretsOf(t, f.mailer.last(t))
	target, err := f.svc.VerifyEmailLink(context.Background(), token, clientIP)
	if err != nil || target != "" {
		t.Fatalf("link = %q, %v; want a confirmation without a redirect", target, err)
	}
	if !f.userByEmail(t, "new@example.test").EmailVerified {
		t.Fatal("the link did not verify the address")
	}
}

// The "check your inbox" page of the account page's own sign-in carries that sign-in's state: its
// resend continues the sign-in to the account callback as any resend continues its request.
func TestAResendOfTheAccountPagesSignInContinuesIt(t *testing.T) {
	f := newFixture(t)
	f.signUpOutcome(t, "new@example.test", goodPassword)
	p := app.LoginParams{ClientID: f.app.ID, RedirectURI: accountCallback, State: "account-state", Nonce: "account-nonce"}
	if _, err := f.svc.ResendVerification(context.Background(), app.ResendInput{Params: p, Email: "new@example.test", ClientIP: clientIP}); err != nil {
		t.Fatal(err)
	}
	token, _ := secretsOf(t, f.mailer.last(t))
	target, err := f.svc.VerifyEmailLink(context.Background(), token, clientIP)
	if err != nil || !strings.HasPrefix(target, accountCallback+"?") || query(t, target).Get("state") != "account-state" {
		t.Fatalf("link = %q, %v; want the account callback with the sign-in's state", target, err)
	}
}
