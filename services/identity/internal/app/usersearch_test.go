package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func TestSearchUsersRefusesBadRequestsInTheRightField(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cases := []struct {
		name         string
		appID, query string
		size         int32
		after        string
		code         codes.Code
		field        string
	}{
		{"app id not a UUID", "app", "", 0, "", codes.InvalidArgument, "appId"},
		{"unknown app", uuid.NewString(), "", 0, "", codes.NotFound, ""},
		{"page size above 100", f.app.ID, "", 101, "", codes.InvalidArgument, "pageSize"},
		{"negative page size", f.app.ID, "", -1, "", codes.InvalidArgument, "pageSize"},
		{"a cursor not made by a search", f.app.ID, "", 0, "bm90IGEgY3Vyc29y", codes.InvalidArgument, "after"},
		{"query with a control character", f.app.ID, "ada\x1b", 0, "", codes.InvalidArgument, "query"},
		{"query longer than an address", f.app.ID, strings.Repeat("a", 255), 0, "", codes.InvalidArgument, "query"},
	}
	for _, c := range cases {
		_, err := f.svc.SearchUsers(ctx, c.appID, c.query, c.size, c.after)
		if codeOf(err) != c.code || (c.field != "" && fieldOf(err) != c.field) {
			t.Errorf("%s: err = %v (field %q), want %v on %q", c.name, err, fieldOf(err), c.code, c.field)
		}
	}
}

func TestSearchUsersPagesThroughEveryMatchOnceAndEndsWithoutACursor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, e := range []string{"Sam.A@example.test", "sam.b@example.test", "SAM.C@example.test", "sam.d@example.test", "sam.e@example.test", "other@example.test"} {
		f.newUser(t, f.app.ID, e, "")
	}
	var got []string
	after, pages := "", 0
	for {
		p, err := f.svc.SearchUsers(ctx, f.app.ID, " SAM. ", 2, after)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, u := range p.Users {
			got = append(got, u.Email)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	want := []string{"Sam.A@example.test", "sam.b@example.test", "SAM.C@example.test", "sam.d@example.test", "sam.e@example.test"}
	if strings.Join(got, " ") != strings.Join(want, " ") || pages != 3 {
		t.Errorf("pages = %d with %v, want 3 pages with %v", pages, got, want)
	}
	p, err := f.svc.SearchUsers(ctx, f.app.ID, "", 0, "")
	if err != nil || len(p.Users) != 7 || p.Next != "" {
		t.Errorf("empty query = %d users, next %q, %v; want all 7 on one page of 25", len(p.Users), p.Next, err)
	}
}

func TestSearchUsersByIDFindsThatUserInAnyCase(t *testing.T) {
	f := newFixture(t)
	p, err := f.svc.SearchUsers(context.Background(), strings.ToUpper(f.app.ID), strings.ToUpper(f.user.ID), 0, "")
	if err != nil || len(p.Users) != 1 || p.Users[0].ID != f.user.ID {
		t.Errorf("search by id = %+v, %v; want the user", p, err)
	}
}

func TestUserKeyIsTheLowerCasedEmailThenTheID(t *testing.T) {
	u := domain.User{ID: "id", Email: "Ada@Example.TEST"}
	if got := app.UserKey(u); got != (keyset.Key{Text: "ada@example.test", ID: "id"}) {
		t.Errorf("UserKey = %+v", got)
	}
}

func TestGetUserDetailShowsSessionsProvidersAndFactorsButNoSecret(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, u := f.session(t, "grace@example.test")
	link := domain.ProviderLink{AppID: f.app.ID, Slot: "idpB", Subject: "subject-1", UserID: u.ID, Email: "grace@idp.test", CreatedAt: clockTime}
	if err := f.store.CreateProviderLink(ctx, link); err != nil {
		t.Fatal(err)
	}
	f.enrolTOTP(t, "grace@example.test")

	d, err := f.svc.GetUserDetail(ctx, f.app.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.User.ID != u.ID || len(d.Sessions) == 0 {
		t.Errorf("user %s with %d sessions, want grace's sessions", d.User.ID, len(d.Sessions))
	}
	for _, x := range d.Sessions {
		if x.UserID != u.ID || x.UserAgent != browserAgent || x.ClientIP != clientIP {
			t.Errorf("session %+v, want grace's from the test browser", x)
		}
	}
	if len(d.Links) != 1 || d.Links[0].Slot != "idpB" || d.Links[0].Email != "grace@idp.test" {
		t.Errorf("links = %+v, want the idpB link", d.Links)
	}
	if len(d.Factors) != 1 || d.Factors[0].Kind != domain.FactorTOTP || d.Factors[0].ConfirmedAt == nil {
		t.Errorf("factors = %+v, want the confirmed TOTP factor", d.Factors)
	}
	for _, x := range d.Factors {
		if x.SealedSecret != nil {
			t.Error("a factor's sealed secret left the use case")
		}
	}
	if d.RecoveryCodesLeft == 0 {
		t.Error("recovery codes left = 0, want the enrolment's codes")
	}

	other := f.newApp(t)
	for name, call := range map[string]func() error{
		"another app's user": func() error { _, err := f.svc.GetUserDetail(ctx, other.ID, u.ID); return err },
		"an unknown user":    func() error { _, err := f.svc.GetUserDetail(ctx, f.app.ID, uuid.NewString()); return err },
	} {
		if err := call(); codeOf(err) != codes.NotFound {
			t.Errorf("%s: err = %v, want NotFound", name, err)
		}
	}
	if _, err := f.svc.GetUserDetail(ctx, f.app.ID, "grace"); codeOf(err) != codes.InvalidArgument || fieldOf(err) != "userId" {
		t.Errorf("user id not a UUID: err = %v, want InvalidArgument on userId", err)
	}
}

func TestOwnersPasswordResetMailEndsOnTheAccountPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.svc.SendPasswordReset(ctx, f.app.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	m := f.mailer.waitReset(t, 1)
	if m.To != f.user.Email {
		t.Errorf("reset mailed to %q, want %q", m.To, f.user.Email)
	}
	link := resetLinkRE.FindStringSubmatch(m.Text)[1]
	redirect, err := f.completeReset(app.ResetProof{Link: link}, newPassword)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(redirect, "https://berth.test"+app.AccountCallbackPath+"?") || query(t, redirect).Get("code") == "" {
		t.Errorf("redirect = %s, want the account page's callback with a code", redirect)
	}
}

func TestOwnersMailsAreRefusedForFrozenDeletedAndUnknownUsersAndCountAgainstTheLimits(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	frozen := f.newUser(t, f.app.ID, "frozen@example.test", "")
	if err := f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, frozen.ID, "0"); err != nil {
		t.Fatal(err)
	}
	deleted := f.newUser(t, f.app.ID, "deleted@example.test", "")
	if err := f.svc.DeleteUser(ctx, f.app.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	actions := map[string]func(appID, userID string) error{
		"reset":  func(a, u string) error { return f.svc.SendPasswordReset(ctx, a, u) },
		"resend": func(a, u string) error { return f.svc.ResendUserVerification(ctx, a, u) },
	}
	for name, act := range actions {
		for who, c := range map[string]struct {
			userID string
			code   codes.Code
		}{
			"frozen": {frozen.ID, codes.FailedPrecondition}, "deleted": {deleted.ID, codes.NotFound},
			"unknown": {uuid.NewString(), codes.NotFound},
		} {
			if err := act(f.app.ID, c.userID); codeOf(err) != c.code {
				t.Errorf("%s for a %s user: err = %v, want %v", name, who, err, c.code)
			}
		}
	}
	if f.mailer.count() != 0 {
		t.Errorf("%d mails sent, want none", f.mailer.count())
	}
	if err := f.svc.ResendUserVerification(ctx, f.app.ID, f.user.ID); codeOf(err) != codes.FailedPrecondition {
		t.Errorf("resend to a verified address: err = %v, want FailedPrecondition", err)
	}

	unverified, err := f.svc.CreateUser(ctx, app.NewUser{AppID: f.app.ID, Email: "new@example.test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range app.DefaultLoginLimits.ResendsPerEmail {
		if err := f.svc.ResendUserVerification(ctx, f.app.ID, unverified.ID); err != nil {
			t.Fatalf("resend %d: %v", i+1, err)
		}
	}
	if err := f.svc.ResendUserVerification(ctx, f.app.ID, unverified.ID); codeOf(err) != codes.ResourceExhausted {
		t.Errorf("resend past the address's limit: err = %v, want ResourceExhausted", err)
	}
	if token, _ := secretsOf(t, f.mailer.last(t)); token == "" {
		t.Error("the verification mail carries no link")
	}
	for i := range app.DefaultLoginLimits.Resets {
		if err := f.svc.SendPasswordReset(ctx, f.app.ID, f.user.ID); err != nil {
			t.Fatalf("reset %d: %v", i+1, err)
		}
	}
	if err := f.svc.SendPasswordReset(ctx, f.app.ID, f.user.ID); codeOf(err) != codes.ResourceExhausted {
		t.Errorf("reset past the address's limit: err = %v, want ResourceExhausted", err)
	}
}
