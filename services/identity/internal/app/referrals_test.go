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

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/grpcx"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// fakeSender captures sent messages; with fail set it refuses them.
type fakeSender struct {
	mu   sync.Mutex
	sent []mail.Message
	fail error
}

func (s *fakeSender) Send(_ context.Context, m mail.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.sent = append(s.sent, m)
	return nil
}

// count is how many mails were sent.
func (s *fakeSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

func (s *fakeSender) last(t *testing.T) mail.Message {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sent) == 0 {
		t.Fatal("no message sent")
	}
	return s.sent[len(s.sent)-1]
}

func (f *fixture) invite(userID, lang string) error {
	return f.svc.SendReferralInvite(context.Background(), f.app.ID, app.Invite{UserID: userID, Email: "friend@example.test", Language: lang})
}

// inviteLink is the link of the last invite, parsed.
func (f *fixture) inviteLink(t *testing.T) *url.URL {
	t.Helper()
	m := f.mailer.last(t)
	raw := regexp.MustCompile(`https://\S+`).FindString(m.Text)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var stateRE = regexp.MustCompile(`^[A-Za-z0-9]{64}$`)

func TestReferralInviteMessageAndLink(t *testing.T) {
	for _, tc := range []struct {
		lang, subject, greeting, page string
	}{
		{"en", "Your invitation to app", "Hello,", "en"},
		{"EN", "Your invitation to app", "Hello,", "en"},
		{"de", "Deine Einladung zu app", "Hallo,", "de"},
		{" De ", "Deine Einladung zu app", "Hallo,", "de"},
		{"CH", "Deine Einladung zu app", "Hallo,", "de"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			f := newFixture(t)
			if err := f.invite(f.user.ID, tc.lang); err != nil {
				t.Fatal(err)
			}
			m := f.mailer.last(t)
			if m.To != "friend@example.test" || m.Subject != tc.subject || !strings.HasPrefix(m.Text, tc.greeting) ||
				!strings.Contains(m.HTML, "<p>"+tc.greeting+"</p>") {
				t.Errorf("message = %+v", m)
			}
			link := f.inviteLink(t)
			q := link.Query()
			if link.Scheme+"://"+link.Host+link.Path != "https://berth.test/login" || q.Get("client_id") != f.app.ID ||
				q.Get("type") != "signUp" || q.Get("redirect_uri") != f.app.RedirectURIs[0] ||
				!stateRE.MatchString(q.Get("state")) || !domain.WellFormedSecret(q.Get("referral")) || q.Get("language") != tc.page {
				t.Errorf("link = %s", link)
			}
			// The HTML part links to the same page, escaped for HTML.
			if !strings.Contains(m.HTML, `href="`+strings.ReplaceAll(link.String(), "&", "&amp;")+`"`) {
				t.Errorf("HTML does not carry the link:\n%s", m.HTML)
			}
		})
	}
}

// The app's branding names it in the subject and the body and colours the HTML part; the inviter's
// own language does not matter, the invitee's (route 23's language) does.
func TestABrandedAppsInviteIsInTheInviteesLanguageUnderItsDisplayName(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.SetAppBranding(ctx, f.app.ID, "Schön & Co", "#0a7f3e", "https://cdn.example.test/logo.png", "en"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Language: ptr("en")}); err != nil {
		t.Fatal(err)
	}
	if err := f.invite(f.user.ID, "DE"); err != nil {
		t.Fatal(err)
	}
	m := f.mailer.last(t)
	if m.Subject != "Deine Einladung zu Schön & Co" || !strings.Contains(m.Text, "du bist eingeladen, Schön & Co beizutreten") ||
		!strings.Contains(m.HTML, `style="color:#0a7f3e"`) || !strings.Contains(m.HTML, `<img src="https://cdn.example.test/logo.png"`) {
		t.Errorf("message = %+v", m)
	}
	if got := f.inviteLink(t).Query().Get("language"); got != "de" {
		t.Errorf("the sign-up page opens in %q", got)
	}
}

func TestReferralInviteStatesDiffer(t *testing.T) {
	f := newFixture(t)
	seen := map[string]bool{}
	for range 3 {
		if err := f.invite(f.user.ID, "en"); err != nil {
			t.Fatal(err)
		}
		q := f.inviteLink(t).Query()
		if seen[q.Get("state")] || seen[q.Get("referral")] {
			t.Fatalf("state or code repeated: %v", q)
		}
		seen[q.Get("state")], seen[q.Get("referral")] = true, true
	}
}

func TestReferralInviteRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	deleted := f.newUser(t, f.app.ID, "gone@example.test", "")
	if err := f.svc.DeleteUser(ctx, f.app.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	frozen := f.newUser(t, f.app.ID, "ice@example.test", "")
	if err := f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, frozen.ID, "0"); err != nil {
		t.Fatal(err)
	}
	otherApp := f.newApp(t)
	stranger := f.newUser(t, otherApp.ID, "x@example.test", "")
	good := app.Invite{UserID: f.user.ID, Email: "friend@example.test", Language: "en"}
	with := func(change func(*app.Invite)) app.Invite {
		in := good
		change(&in)
		return in
	}
	for _, tc := range []struct {
		name      string
		in        app.Invite
		wantCode  codes.Code
		wantField string
	}{
		{"user id not a UUID", with(func(in *app.Invite) { in.UserID = "ada" }), codes.InvalidArgument, "userId"},
		{"bad email", with(func(in *app.Invite) { in.Email = "friend" }), codes.InvalidArgument, "email"},
		{"email with a display name", with(func(in *app.Invite) { in.Email = "Friend <friend@example.test>" }), codes.InvalidArgument, "email"},
		{"no language", with(func(in *app.Invite) { in.Language = "" }), codes.InvalidArgument, "language"},
		{"unsupported language", with(func(in *app.Invite) { in.Language = "xx" }), codes.InvalidArgument, "language"},
		{"language with a region", with(func(in *app.Invite) { in.Language = "en-GB" }), codes.InvalidArgument, "language"},
		{"unknown user", with(func(in *app.Invite) { in.UserID = "6f1c1c3e-0000-4000-8000-000000000000" }), codes.NotFound, ""},
		{"user of another app", with(func(in *app.Invite) { in.UserID = stranger.ID }), codes.NotFound, ""},
		{"deleted user", with(func(in *app.Invite) { in.UserID = deleted.ID }), codes.NotFound, ""},
		{"frozen user acting with a token", with(func(in *app.Invite) { in.UserID, in.ByToken = frozen.ID, true }), codes.PermissionDenied, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := f.svc.SendReferralInvite(ctx, f.app.ID, tc.in)
			wantStatus(t, tc.name, err, tc.wantCode)
			if tc.wantField != "" && fieldOf(err) != tc.wantField {
				t.Errorf("field = %q, want %q", fieldOf(err), tc.wantField)
			}
		})
	}
	if len(f.mailer.sent) != 0 {
		t.Errorf("refused invites sent %d messages", len(f.mailer.sent))
	}
	// The app's own write key may still invite on behalf of a frozen user.
	if err := f.svc.SendReferralInvite(ctx, f.app.ID, with(func(in *app.Invite) { in.UserID = frozen.ID })); err != nil {
		t.Errorf("frozen user with a write key: %v", err)
	}
}

func TestReferralInviteDailyLimit(t *testing.T) {
	f := newFixture(t)
	start := f.now
	for i := 1; i <= app.InviteLimit; i++ {
		if err := f.invite(f.user.ID, "en"); err != nil {
			t.Fatalf("invite %d: %v", i, err)
		}
		f.now = f.now.Add(time.Minute)
	}
	err := f.invite(f.user.ID, "en")
	wantStatus(t, "invite 21", err, codes.ResourceExhausted)
	if !strings.Contains(err.Error(), "daily invite limit reached") {
		t.Errorf("error = %v", err)
	}
	if got := grpcx.RetryAfterOf(grpcx.StatusOf(err)); got != app.InviteWindow {
		t.Errorf("retry-after = %v, want the invite window", got)
	}
	if len(f.mailer.sent) != app.InviteLimit {
		t.Errorf("%d messages sent, want %d", len(f.mailer.sent), app.InviteLimit)
	}
	other := f.newUser(t, f.app.ID, "grace@example.test", "")
	if err := f.invite(other.ID, "en"); err != nil {
		t.Errorf("another user's first invite: %v", err)
	}
	// The window rolls: exactly 24 h after the first invite it still counts; once it is older, one
	// more invite is allowed, then the limit holds again.
	f.now = start.Add(app.InviteWindow)
	wantStatus(t, "invite exactly 24 h after the first", f.invite(f.user.ID, "en"), codes.ResourceExhausted)
	f.now = start.Add(app.InviteWindow + time.Second)
	if err := f.invite(f.user.ID, "en"); err != nil {
		t.Errorf("invite once the first left the window: %v", err)
	}
	wantStatus(t, "next invite in the same minute", f.invite(f.user.ID, "en"), codes.ResourceExhausted)
}

func TestReferralInviteUnavailableMail(t *testing.T) {
	f := newFixture(t)
	f.mailer.fail = errors.New("smtp down")
	for range app.InviteLimit + 1 {
		wantStatus(t, "failed send", f.invite(f.user.ID, "en"), codes.Unavailable)
	}
	// Failed sends counted nothing.
	f.mailer.fail = nil
	for i := 1; i <= app.InviteLimit; i++ {
		if err := f.invite(f.user.ID, "en"); err != nil {
			t.Fatalf("invite %d after failures: %v", i, err)
		}
	}

	noMail, err := app.New(app.Config{Store: memory.New(&events.MemoryOutbox{}), Pepper: []byte("p"), Box: f.box,
		PublicURL: "https://berth.test", Passwords: cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	err = noMail.SendReferralInvite(context.Background(), f.app.ID, app.Invite{UserID: f.user.ID, Email: "friend@example.test", Language: "en"})
	wantStatus(t, "no mailer", err, codes.Unavailable)
}

func TestSignUpRecordsTheReferrer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.invite(f.user.ID, "en"); err != nil {
		t.Fatal(err)
	}
	code := f.inviteLink(t).Query().Get("referral")
	otherApp := f.newApp(t)
	inviterElsewhere := f.newUser(t, otherApp.ID, "x@example.test", "")
	if err := f.svc.SendReferralInvite(ctx, otherApp.ID, app.Invite{UserID: inviterElsewhere.ID, Email: "friend@example.test", Language: "de"}); err != nil {
		t.Fatal(err)
	}
	foreignCode := f.inviteLink(t).Query().Get("referral")

	signUp := func(email, referral string) domain.User {
		t.Helper()
		p := f.params()
		p.Referral = referral
		if _, err := f.svc.SignUp(ctx, app.SignUpInput{Params: p, Email: email, Password: goodPassword, ClientIP: clientIP}); err != nil {
			t.Fatalf("SignUp(%s): %v", email, err)
		}
		u, err := f.svc.GetUser(ctx, f.app.ID, email)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, tc := range []struct {
		name, email, referral, want string
		later                       time.Duration
	}{
		{"a valid code", "one@example.test", code, f.user.ID, 0},
		{"the same code again", "two@example.test", code, f.user.ID, 0},
		{"no code", "three@example.test", "", "", 0},
		{"a malformed code", "four@example.test", "not-a-code", "", 0},
		{"an unknown code", "five@example.test", strings.Repeat("A", 43), "", 0},
		{"a code of another app", "six@example.test", foreignCode, "", 0},
		{"a code just before it expires", "seven@example.test", code, f.user.ID, domain.ReferralTTL - time.Second},
		{"an expired code", "eight@example.test", code, "", domain.ReferralTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := f.now
			defer func() { f.now = saved }()
			f.now = f.now.Add(tc.later)
			if u := signUp(tc.email, tc.referral); u.ReferredBy != tc.want {
				t.Errorf("referredBy = %q, want %q", u.ReferredBy, tc.want)
			}
		})
	}
}

func TestGetTenantReferrerNamesTheLiveInviterOfTheTenantsReferredUser(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	inviterTenant := uuid.NewString()
	inviter := f.newUser(t, f.app.ID, "inviter@example.test", inviterTenant)
	if err := f.invite(inviter.ID, "en"); err != nil {
		t.Fatal(err)
	}
	p := f.params()
	p.Referral = f.inviteLink(t).Query().Get("referral")
	if _, err := f.svc.SignUp(ctx, app.SignUpInput{Params: p, Email: "friend@example.test", Password: goodPassword, ClientIP: clientIP}); err != nil {
		t.Fatal(err)
	}
	friend, err := f.svc.GetUser(ctx, f.app.ID, "friend@example.test")
	if err != nil {
		t.Fatal(err)
	}

	got, err := f.svc.GetTenantReferrer(ctx, f.app.ID, friend.TenantID)
	if err != nil || got.ID != inviter.ID || got.TenantID != inviterTenant {
		t.Fatalf("GetTenantReferrer = %s of tenant %s, %v; want %s of %s", got.ID, got.TenantID, err, inviter.ID, inviterTenant)
	}
	_, err = f.svc.GetTenantReferrer(ctx, f.app.ID, inviterTenant)
	wantNotFound(t, err) // nobody referred the inviter's own tenant
	_, err = f.svc.GetTenantReferrer(ctx, f.newApp(t).ID, friend.TenantID)
	wantNotFound(t, err) // the tenant is this app's only
	_, err = f.svc.GetTenantReferrer(ctx, f.app.ID, "t")
	wantInvalid(t, err, "tenantId")

	if err := f.svc.DeleteUser(ctx, f.app.ID, inviter.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.GetTenantReferrer(ctx, f.app.ID, friend.TenantID)
	wantNotFound(t, err) // a deleted inviter is owed nothing
}
