package app_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/mail"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Route 18: a user's email may change EmailChanges times a day. Refused changes (an address of
// another user) count, which is the probe the limit bounds; unchanged or invalid emails do not.
func TestEmailChangesAreLimitedPerUserPerDay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.newUser(t, f.app.ID, "taken@example.test", "")
	change := func(email string) error {
		return f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: &email})
	}
	changes := app.DefaultLoginLimits.EmailChanges
	wantStatus(t, "taken address", change("taken@example.test"), codes.InvalidArgument)
	for i := range changes - 1 {
		if err := change(fmt.Sprintf("ada%d@example.test", i)); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	current := fmt.Sprintf("ADA%d@example.test", changes-2) // the same address in other case
	if err := change(current); err != nil {
		t.Fatalf("re-sending the current email: %v", err)
	}
	wantStatus(t, "invalid email", change("not an email"), codes.InvalidArgument)
	if err := f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Nickname: ptr("nick")}); err != nil {
		t.Fatalf("a patch without email: %v", err)
	}
	err := change("one-more@example.test")
	wantStatus(t, "change over the daily limit", err, codes.ResourceExhausted)
	if got := grpcx.RetryAfterOf(grpcx.StatusOf(err)); got != 24*time.Hour {
		t.Errorf("retry-after = %v, want a day", got)
	}
	f.now = f.now.Add(24*time.Hour + time.Second)
	if err := change("next-day@example.test"); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}

// linkToken is the token of the confirmation link in a mail's text part.
func linkToken(t *testing.T, m mail.Message) string {
	t.Helper()
	match := regexp.MustCompile(`https://berth\.test/email-change\?token=([A-Za-z0-9_-]+)`).FindStringSubmatch(m.Text)
	if match == nil {
		t.Fatalf("no confirmation link in %q", m.Text)
	}
	return match[1]
}

func TestATokensNewEmailAppliesOnlyOnceTheNewAddressConfirms(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.drain(t)
	if err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr(" new@example.test "), Nickname: ptr("nick")}); err != nil {
		t.Fatal(err)
	}
	u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID)
	if u.Email != "ada@example.test" || !u.EmailVerified || u.Nickname != "nick" {
		t.Fatalf("before confirmation: email %q verified %v nickname %q, want the old verified address and the new nickname", u.Email, u.EmailVerified, u.Nickname)
	}
	if evs := f.drain(t); !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventUserUpdated}) {
		t.Errorf("events before confirmation = %v, want the nickname's update only", types(evs))
	}
	sent := f.mailer.last(t)
	if sent.To != "new@example.test" || !strings.Contains(sent.Subject, "Confirm your new email address") || sent.HTML == "" {
		t.Fatalf("mail = %+v, want a confirmation with both parts to the new address", sent)
	}
	token := linkToken(t, sent)

	described, err := f.svc.DescribeEmailChange(ctx, token)
	if err != nil || described.Email != "new@example.test" || described.App.ID != f.app.ID {
		t.Fatalf("DescribeEmailChange = %+v, %v", described, err)
	}
	if u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID); u.Email != "ada@example.test" {
		t.Fatal("showing the confirmation page changed the address")
	}

	confirmed, err := f.svc.ConfirmEmailChange(ctx, token)
	if err != nil || confirmed.Email != "new@example.test" {
		t.Fatalf("ConfirmEmailChange = %+v, %v", confirmed, err)
	}
	u, _ = f.svc.GetUser(ctx, f.app.ID, f.user.ID)
	if u.Email != "new@example.test" || !u.EmailVerified {
		t.Errorf("after confirmation: email %q verified %v", u.Email, u.EmailVerified)
	}
	evs := f.drain(t)
	if !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventUserUpdated, identityv1.EventUserEmailChanged}) {
		t.Fatalf("events = %v", types(evs))
	}
	var changed identityv1.UserEmailChanged
	if err := evs[1].Decode(&changed); err != nil {
		t.Fatal(err)
	}
	if changed.GetEmail() != "new@example.test" || changed.GetPreviousEmail() != "ada@example.test" || !changed.GetVerified() || changed.GetUserId() != f.user.ID {
		t.Errorf("email_changed payload = %v", &changed)
	}
	if told := f.mailer.last(t); told.To != "ada@example.test" || !strings.Contains(told.Subject, "was changed") || strings.Contains(told.Text, "token=") {
		t.Errorf("the old address was not told (or was sent a link): %+v", told)
	}

	if _, err := f.svc.ConfirmEmailChange(ctx, token); !errors.Is(err, domain.ErrChallengeSpent) {
		t.Errorf("a second confirmation = %v, want the link spent", err)
	}
}

func TestATokensChangeToATakenAddressAnswersAsForAFreeOneAndOnlyTellsTheOwner(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.newUser(t, f.app.ID, "taken@example.test", "")
	f.drain(t)
	if err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("TAKEN@example.test")}); err != nil {
		t.Fatalf("a taken address answered %v, want the answer of a free one", err)
	}
	sent := f.mailer.last(t)
	if sent.To != "TAKEN@example.test" || !strings.Contains(sent.Subject, "Someone tried to use your email address") || strings.Contains(sent.Text, "token=") {
		t.Errorf("mail = %+v, want the notice without a link", sent)
	}
	if u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID); u.Email != "ada@example.test" {
		t.Errorf("the user's address became %q", u.Email)
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("events = %v, want none", types(evs))
	}
}

func TestAnAddressTakenBeforeTheConfirmationLeavesTheUserAsTheyWere(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("new@example.test")}); err != nil {
		t.Fatal(err)
	}
	token := linkToken(t, f.mailer.last(t))
	f.newUser(t, f.app.ID, "new@example.test", "")
	f.drain(t)
	if _, err := f.svc.ConfirmEmailChange(ctx, token); !errors.Is(err, domain.ErrChallengeSpent) {
		t.Fatalf("confirming a taken address = %v, want the link refused", err)
	}
	if u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID); u.Email != "ada@example.test" {
		t.Errorf("the user's address became %q", u.Email)
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("events = %v, want none", types(evs))
	}
}

func TestATokensEmailChangeRefusesWithoutMailingWhenAnotherFieldIsInvalid(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("new@example.test"), Website: ptr("nope")})
	wantInvalid(t, err, "user.website")
	if n := f.mailer.count(); n != 0 {
		t.Errorf("%d mails sent for a refused request", n)
	}
	wantInvalid(t, f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("not mail")}), "user.email")
}

func TestATokensEmailChangesShareTheDailyLimit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.newUser(t, f.app.ID, "taken@example.test", "")
	for i := range app.DefaultLoginLimits.EmailChanges {
		email := fmt.Sprintf("new%d@example.test", i)
		if i%2 == 1 {
			email = "taken@example.test" // a taken address counts like a free one
		}
		if err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: &email}); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("one-more@example.test")})
	wantStatus(t, "change over the daily limit", err, codes.ResourceExhausted)
}

func TestEmailChangeLinksThatAreNotLiveAreRefusedAlike(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, link := range []string{"", "short", strings.Repeat("A", 43)} {
		if _, err := f.svc.DescribeEmailChange(ctx, link); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("Describe(%q) = %v", link, err)
		}
		if _, err := f.svc.ConfirmEmailChange(ctx, link); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("Confirm(%q) = %v", link, err)
		}
	}
	if err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("first@example.test")}); err != nil {
		t.Fatal(err)
	}
	first := linkToken(t, f.mailer.last(t))
	if err := f.svc.UpdateUserByToken(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("second@example.test")}); err != nil {
		t.Fatal(err)
	}
	second := linkToken(t, f.mailer.last(t))
	if _, err := f.svc.ConfirmEmailChange(ctx, first); !errors.Is(err, domain.ErrChallengeSpent) {
		t.Errorf("a retired link = %v, want it refused", err)
	}
	f.now = f.now.Add(domain.PurposeChangeEmail.TTL() + time.Second)
	if _, err := f.svc.DescribeEmailChange(ctx, second); !errors.Is(err, domain.ErrChallengeSpent) {
		t.Errorf("an expired link = %v, want it refused", err)
	}
}

func TestATokensEmailChangeIsUnavailableWithoutAMailer(t *testing.T) {
	f := newFixture(t, func(c *app.Config) { c.Mailer = nil })
	err := f.svc.UpdateUserByToken(context.Background(), f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("new@example.test")})
	wantStatus(t, "no mailer", err, codes.Unavailable)
}
