package app_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/mail"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const newPassword = "a brand new passphrase"

// waitReset waits for the n-th password-reset mail sent (1-based) and returns it. Other mails (the
// verification mail of a sign-up) are not counted.
func (s *fakeSender) waitReset(t *testing.T, n int) mail.Message {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if resets := s.resets(); len(resets) >= n {
			return resets[n-1]
		}
	}
	t.Fatalf("reset mail %d was never sent", n)
	return mail.Message{}
}

// resets are the password-reset mails sent so far.
func (s *fakeSender) resets() []mail.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mail.Message
	for _, m := range s.sent {
		if resetLinkRE.MatchString(m.Text) {
			out = append(out, m)
		}
	}
	return out
}

var (
	resetLinkRE = regexp.MustCompile(`https://berth\.test/login/recover\?language=en&token=([A-Za-z0-9_-]+)\n`)
	resetCodeRE = regexp.MustCompile(`(?m)^([0-9]{6})$`)
)

// resetMail is what a reset mail carries.
type resetMail struct{ flow, link, code string }

// startReset asks for a reset of email from clientIP and, when want > 0, waits for the want-th
// mail and reads its link and code.
func (f *fixture) startReset(t *testing.T, email string, want int) resetMail {
	t.Helper()
	flow, err := f.svc.StartPasswordReset(context.Background(), app.ResetStart{Params: f.params(), Email: email, ClientIP: clientIP})
	if err != nil {
		t.Fatalf("StartPasswordReset(%s): %v", email, err)
	}
	if !domain.IsUUID(flow) {
		t.Fatalf("flow = %q, want a UUID", flow)
	}
	r := resetMail{flow: flow}
	if want > 0 {
		m := f.mailer.waitReset(t, want)
		r.link = resetLinkRE.FindStringSubmatch(m.Text)[1]
		r.code = resetCodeRE.FindStringSubmatch(m.Text)[1]
	}
	return r
}

func (f *fixture) completeReset(proof app.ResetProof, pw string) (string, error) {
	return f.svc.CompletePasswordReset(context.Background(), app.ResetCompletion{Proof: proof, Password: pw, ClientIP: clientIP})
}

func (f *fixture) codeProof(r resetMail, code string) app.ResetProof {
	return app.ResetProof{ClientID: f.app.ID, FlowID: r.flow, Code: code}
}

func TestPasswordResetAnswersEveryAddressAlikeAndMailsOnlyAnActiveUser(t *testing.T) {
	f := newFixture(t)
	f.signUp(t, "grace@example.test")
	frozen := f.newUser(t, f.app.ID, "frozen@example.test", "")
	if err := f.svc.SetAccessStatus(context.Background(), f.app.ID, f.app.ID, frozen.ID, "0"); err != nil {
		t.Fatal(err)
	}
	f.startReset(t, "nobody@example.test", 0)
	f.startReset(t, "frozen@example.test", 0)
	r := f.startReset(t, "GRACE@example.test", 1)
	m := f.mailer.waitReset(t, 1)
	if m.To != "grace@example.test" || m.Subject != "Reset your password for app" || m.HTML == "" {
		t.Errorf("mail = to %q, subject %q, HTML %d bytes", m.To, m.Subject, len(m.HTML))
	}
	if strings.Contains(m.Text, "state-1") || strings.Contains(m.Text, "nonce-1") {
		t.Error("the mail's link carries the authorization request; the challenge holds it")
	}
	time.Sleep(50 * time.Millisecond) // a mail to the other two would have been sent by now
	if n := len(f.mailer.resets()); n != 1 {
		t.Errorf("%d reset mails sent, want only the active user's", n)
	}
	if r.link == "" || r.code == "" {
		t.Fatal("the mail lacks its link or code")
	}
}

func TestPasswordResetRefusesBadInputWithoutSending(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.svc.StartPasswordReset(ctx, app.ResetStart{Params: f.params(), Email: "not an address", ClientIP: clientIP})
	wantInvalid(t, err, "email")
	bad := f.params()
	bad.RedirectURI = "https://evil.test/cb"
	_, err = f.svc.StartPasswordReset(ctx, app.ResetStart{Params: bad, Email: "ada@example.test", ClientIP: clientIP})
	wantInvalid(t, err, "redirect_uri")
	if n := f.mailer.count(); n != 0 {
		t.Errorf("refused requests sent %d mails", n)
	}

	f.signUp(t, "grace@example.test")
	r := f.startReset(t, "grace@example.test", 1)
	_, err = f.completeReset(app.ResetProof{Link: r.link}, "short")
	wantInvalid(t, err, "password")
	// The refused password left the link working.
	if _, err := f.completeReset(app.ResetProof{Link: r.link}, newPassword); err != nil {
		t.Fatal(err)
	}
}

func TestPasswordResetByLinkContinuesTheAuthorizationRequestAndEndsEverySession(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	r := f.startReset(t, "grace@example.test", 1)

	rc, err := f.svc.CheckPasswordReset(ctx, app.ResetProof{Link: r.link})
	if err != nil || rc.AppName != "app" || rc.RedirectURI != "https://app.test/cb" {
		t.Fatalf("CheckPasswordReset = %+v, %v", rc, err)
	}
	redirect, err := f.completeReset(app.ResetProof{Link: r.link}, newPassword)
	if err != nil {
		t.Fatal(err)
	}
	q := query(t, redirect)
	if !strings.HasPrefix(redirect, "https://app.test/cb?") || q.Get("state") != "state-1" || q.Get("nonce") != "nonce-1" || q.Get("code") == "" {
		t.Fatalf("redirect = %s, want the app's redirect URI with a code and the request's state", redirect)
	}
	if _, err := f.exchange(q.Get("code")); err != nil {
		t.Errorf("the reset's code does not exchange: %v", err)
	}
	if _, err := f.refresh(old.RefreshToken, "nonce-2"); err == nil {
		t.Error("the refresh token issued before the reset still works")
	}
	if _, err := f.signIn("grace@example.test", goodPassword); err == nil {
		t.Error("the old password still signs in")
	}
	if _, err := f.signIn("grace@example.test", newPassword); err != nil {
		t.Errorf("the new password does not sign in: %v", err)
	}
	u, err := f.store.GetUserByEmail(ctx, f.app.ID, "grace@example.test")
	if err != nil || !u.EmailVerified {
		t.Errorf("user = %+v, %v, want the address verified by the mail", u, err)
	}
	drained := f.drain(t)
	if rs := sessionsRevoked(t, drained); len(rs) != 1 || rs[0].GetReason() != "password_reset" || !rs[0].GetAll() || len(rs[0].GetSessionIds()) != 1 {
		t.Errorf("sessions-revoked events = %v, want the old session ended by the reset", rs)
	}
	evs := types(drained)
	for _, want := range []eventsv1.Type{identityv1.EventUserPasswordChanged, identityv1.EventUserUpdated, identityv1.EventSessionsRevoked, identityv1.EventUserSignedIn} {
		if !slices.Contains(evs, want) {
			t.Errorf("events = %v, want %s", evs, want)
		}
	}
	// The link is single use; its code went with it.
	if _, err := f.completeReset(app.ResetProof{Link: r.link}, "another new passphrase"); codeOf(err) != codes.InvalidArgument {
		t.Errorf("second use of the link = %v, want the spent answer", err)
	}
	if _, err := f.svc.CheckPasswordReset(ctx, f.codeProof(r, r.code)); codeOf(err) != codes.InvalidArgument {
		t.Errorf("the code after the link was used = %v, want the spent answer", err)
	}
}

func TestPasswordResetByCodeCountsWrongCodesAndAnswersThemLikeAnUnknownFlow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.signUp(t, "grace@example.test")
	unknown := f.startReset(t, "nobody@example.test", 0)
	r := f.startReset(t, "grace@example.test", 1)
	wrong := "000000"
	if wrong == r.code {
		wrong = "111111"
	}
	// A flow of an address without an account answers a code exactly as a wrong code does.
	_, unknownErr := f.svc.CheckPasswordReset(ctx, f.codeProof(unknown, r.code))
	_, wrongErr := f.svc.CheckPasswordReset(ctx, f.codeProof(r, wrong))
	if unknownErr == nil || wrongErr == nil || unknownErr.Error() != wrongErr.Error() || codeOf(wrongErr) != codes.InvalidArgument {
		t.Fatalf("unknown flow = %v, wrong code = %v, want one answer", unknownErr, wrongErr)
	}
	if _, err := f.svc.CheckPasswordReset(ctx, f.codeProof(r, r.code)); err != nil {
		t.Fatalf("the right code after a wrong one: %v", err)
	}
	// Four more wrong codes, malformed ones included, use up the challenge: the right code then fails.
	for _, c := range []string{wrong, "12345", "abcdef", wrong} {
		if _, err := f.svc.CheckPasswordReset(ctx, f.codeProof(r, c)); codeOf(err) != codes.InvalidArgument {
			t.Fatalf("wrong code %q = %v", c, err)
		}
	}
	if _, err := f.completeReset(f.codeProof(r, r.code), newPassword); codeOf(err) != codes.InvalidArgument {
		t.Fatalf("the right code after %d wrong ones = %v, want the spent answer", domain.MaxCodeAttempts, err)
	}

	// A new mail's code works to the end.
	r2 := f.startReset(t, "grace@example.test", 2)
	redirect, err := f.completeReset(f.codeProof(r2, r2.code), newPassword)
	if err != nil || query(t, redirect).Get("code") == "" {
		t.Fatalf("reset by code = %q, %v", redirect, err)
	}
}

func TestPasswordResetExpiresAfterFifteenMinutesAndANewerMailRetiresTheOlder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.signUp(t, "grace@example.test")
	first := f.startReset(t, "grace@example.test", 1)
	second := f.startReset(t, "grace@example.test", 2)
	if _, err := f.svc.CheckPasswordReset(ctx, app.ResetProof{Link: first.link}); codeOf(err) != codes.InvalidArgument {
		t.Errorf("the older mail's link = %v, want the spent answer", err)
	}
	f.now = f.now.Add(15*time.Minute - time.Second)
	if _, err := f.svc.CheckPasswordReset(ctx, app.ResetProof{Link: second.link}); err != nil {
		t.Fatalf("the link just before its 15 minutes end: %v", err)
	}
	f.now = f.now.Add(time.Second)
	if _, err := f.completeReset(app.ResetProof{Link: second.link}, newPassword); codeOf(err) != codes.InvalidArgument {
		t.Errorf("the link after 15 minutes = %v, want the spent answer", err)
	}
	if _, err := f.signIn("grace@example.test", goodPassword); err != nil {
		t.Errorf("an expired reset changed the password: %v", err)
	}
}

func TestPasswordResetLimitsCountEveryAddressAlike(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Limits = app.LoginLimits{Resets: 2, ResetsPerIP: 5} })
	ctx := context.Background()
	f.signUp(t, "grace@example.test")
	start := func(email, ip string) error {
		_, err := f.svc.StartPasswordReset(ctx, app.ResetStart{Params: f.params(), Email: email, ClientIP: ip})
		return err
	}
	for _, email := range []string{"grace@example.test", "nobody@example.test"} {
		for i := 0; i < 2; i++ {
			if err := start(email, "192.0.2.1"); err != nil {
				t.Fatalf("%s, request %d: %v", email, i+1, err)
			}
		}
		// The third request for the address is refused from another client address too, with the
		// same answer whether or not the address has an account.
		err := start(email, "198.51.100.7")
		wantStatus(t, email+" over its limit", err, codes.ResourceExhausted)
		if !strings.Contains(err.Error(), "too many password reset requests") {
			t.Errorf("%s: refusal = %v", email, err)
		}
	}
	// 192.0.2.1 made four requests; its fifth passes and its sixth is refused, whatever the address.
	if err := start("third@example.test", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "address over its limit", start("fourth@example.test", "192.0.2.1"), codes.ResourceExhausted)
}

func TestFrozenAndDeletedUsersCannotCompleteAReset(t *testing.T) {
	for _, status := range []string{"frozen", "deleted"} {
		t.Run(status, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			f.signUp(t, "grace@example.test")
			r := f.startReset(t, "grace@example.test", 1)
			u, err := f.store.GetUserByEmail(ctx, f.app.ID, "grace@example.test")
			if err != nil {
				t.Fatal(err)
			}
			if status == "frozen" {
				err = f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, u.ID, "0")
			} else {
				err = f.svc.DeleteUser(ctx, f.app.ID, u.ID)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.completeReset(app.ResetProof{Link: r.link}, newPassword); codeOf(err) != codes.PermissionDenied {
				t.Fatalf("reset of a %s user = %v, want PermissionDenied", status, err)
			}
			after, err := f.store.GetUser(ctx, f.app.ID, u.ID)
			if err != nil || after.PasswordHash != u.PasswordHash {
				t.Errorf("the refused reset changed the password (%v)", err)
			}
		})
	}
}
