package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const browserAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"

// session signs email in from the test browser (signing up first when needed), exchanges the code
// and returns the tokens and the user.
func (f *fixture) session(t *testing.T, email string) (app.Tokens, domain.User) {
	t.Helper()
	ctx := context.Background()
	redirect, err := f.svc.SignIn(ctx, app.SignInInput{Params: f.params(), Email: email, Password: goodPassword, ClientIP: clientIP, UserAgent: browserAgent})
	if err != nil {
		redirect, err = f.svc.SignUp(ctx, app.SignUpInput{Params: f.params(), Email: email, Password: goodPassword, ClientIP: clientIP, UserAgent: browserAgent})
	}
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	tok, err := f.exchange(query(t, redirect.URL).Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.svc.GetUser(ctx, f.app.ID, email)
	if err != nil {
		t.Fatal(err)
	}
	return tok, u
}

func (f *fixture) sessions(t *testing.T, userID, current string) []domain.Session {
	t.Helper()
	got, err := f.svc.ListSessions(context.Background(), f.app.ID, userID, current)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// sessionsRevoked decodes the identity.sessions.revoked events among evs.
func sessionsRevoked(t *testing.T, evs []events.Event) []*identityv1.SessionsRevoked {
	t.Helper()
	var out []*identityv1.SessionsRevoked
	for _, ev := range evs {
		if ev.Type != identityv1.EventSessionsRevoked {
			continue
		}
		var p identityv1.SessionsRevoked
		if err := ev.Decode(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, &p)
	}
	return out
}

func TestASessionRecordsItsSignInBrowserAndItsLastRefresh(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	signedIn := f.now
	tok, u := f.session(t, "grace@example.test")

	got := f.sessions(t, u.ID, "")
	if len(got) != 1 {
		t.Fatalf("sessions = %+v, want one", got)
	}
	s := got[0]
	if s.AppID != f.app.ID || s.UserID != u.ID || s.ClientIP != clientIP || s.UserAgent != browserAgent ||
		!s.CreatedAt.Equal(signedIn) || !s.LastUsedAt.Equal(signedIn) || s.Current {
		t.Errorf("session = %+v", s)
	}
	// The tokens name their session (sid), in the access token and the ID token.
	if a, id := claimsOf(t, tok.AccessToken, 1), claimsOf(t, tok.IDToken, 1); a["sid"] != s.ID || id["sid"] != s.ID {
		t.Errorf("sid claims = %v / %v, want %s", a["sid"], id["sid"], s.ID)
	}
	if d, err := f.svc.OpenIDConfiguration(ctx, f.app.ID); err != nil || !slices.Contains(d.Claims, "sid") {
		t.Errorf("discovery claims = %v, %v; want sid among them", d.Claims, err)
	}

	f.now = f.now.Add(time.Hour)
	next, err := f.refresh(tok.RefreshToken, "nonce-2")
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.svc.VerifyAccessToken(ctx, next.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if v.SessionID != s.ID {
		t.Errorf("verified token's session = %q, want %q", v.SessionID, s.ID)
	}
	got = f.sessions(t, u.ID, v.SessionID)
	if len(got) != 1 || !got[0].LastUsedAt.Equal(f.now) || !got[0].CreatedAt.Equal(signedIn) || !got[0].Current {
		t.Errorf("session after a refresh = %+v, want last used %v and current", got, f.now)
	}
}

func TestSessionsListOnlyLiveSessionsTheNewestUseFirst(t *testing.T) {
	f := newFixture(t)
	first, u := f.session(t, "grace@example.test")
	f.now = f.now.Add(time.Minute)
	second, _ := f.session(t, "grace@example.test")
	f.now = f.now.Add(time.Minute)
	revoked, _ := f.session(t, "grace@example.test")
	f.now = f.now.Add(time.Minute)
	if _, err := f.refresh(first.RefreshToken, "n"); err != nil { // first is now the most recently used
		t.Fatal(err)
	}
	ids := func(ss []domain.Session) []string {
		out := []string{}
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	all := ids(f.sessions(t, u.ID, ""))
	if len(all) != 3 {
		t.Fatalf("sessions = %v, want three", all)
	}
	revokedID := claimsOf(t, revoked.AccessToken, 1)["sid"].(string)
	if err := f.svc.RevokeSession(context.Background(), f.app.ID, u.ID, revokedID); err != nil {
		t.Fatal(err)
	}
	firstID, secondID := claimsOf(t, first.AccessToken, 1)["sid"].(string), claimsOf(t, second.AccessToken, 1)["sid"].(string)
	if got := ids(f.sessions(t, u.ID, "")); !slices.Equal(got, []string{firstID, secondID}) {
		t.Errorf("sessions = %v, want %v (most recently used first, the revoked one gone)", got, []string{firstID, secondID})
	}
	// Past the refresh lifetime of the second session (never refreshed) only the first is left.
	f.now = f.now.Add(f.app.RefreshTokenTTL - 2*time.Minute)
	if got := ids(f.sessions(t, u.ID, "")); !slices.Equal(got, []string{firstID}) {
		t.Errorf("sessions after the second expired = %v, want %v", got, []string{firstID})
	}
}

func TestRevokingSessionsEndsTheirRefreshAndEmitsSessionsRevoked(t *testing.T) {
	for _, c := range []struct {
		name   string
		revoke func(f *fixture, userID, sessionID string) error
		all    bool
	}{
		{"one session", func(f *fixture, userID, sessionID string) error {
			return f.svc.RevokeSession(context.Background(), f.app.ID, userID, sessionID)
		}, false},
		{"every session", func(f *fixture, userID, _ string) error {
			return f.svc.RevokeSessions(context.Background(), f.app.ID, userID)
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			tok, u := f.session(t, "grace@example.test")
			other, _ := f.session(t, "grace@example.test")
			sid, otherSID := claimsOf(t, tok.AccessToken, 1)["sid"].(string), claimsOf(t, other.AccessToken, 1)["sid"].(string)
			f.drain(t)
			if err := c.revoke(f, strings.ToUpper(u.ID), strings.ToUpper(sid)); err != nil {
				t.Fatal(err)
			}
			if _, err := f.refresh(tok.RefreshToken, "n"); codeOf(err) != codes.InvalidArgument {
				t.Errorf("refresh in a revoked session: %v, want InvalidArgument", err)
			}
			want := []string{sid}
			if c.all {
				want = []string{sid, otherSID}
				slices.Sort(want)
			}
			evs := sessionsRevoked(t, f.drain(t))
			if len(evs) != 1 {
				t.Fatalf("sessions-revoked events = %v, want one", evs)
			}
			ev := evs[0]
			if ev.GetAppId() != f.app.ID || ev.GetUserId() != u.ID || !slices.Equal(ev.GetSessionIds(), want) ||
				ev.GetAll() != c.all || ev.GetReason() != "user_request" || ev.GetAt() != f.now.Format(time.RFC3339) {
				t.Errorf("event = %v, want sessions %v, all %t, reason user_request", ev, want, c.all)
			}
			_, otherErr := f.refresh(other.RefreshToken, "n")
			if c.all != (otherErr != nil) {
				t.Errorf("refresh in the other session: %v (revoking all: %t)", otherErr, c.all)
			}
		})
	}
}

func TestRevokingAllOfAUserWithoutSessionsSucceedsWithoutAnEvent(t *testing.T) {
	f := newFixture(t)
	f.drain(t)
	if err := f.svc.RevokeSessions(context.Background(), f.app.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("events = %v, want none", types(evs))
	}
}

func TestSessionsRoutesRefuseBadIdsAndAnythingNotTheCallersLiveSession(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, u := f.session(t, "grace@example.test")
	sid := claimsOf(t, tok.AccessToken, 1)["sid"].(string)
	strangerTok, stranger := f.session(t, "alan@example.test")
	strangerSID := claimsOf(t, strangerTok.AccessToken, 1)["sid"].(string)
	other := f.newApp(t)
	gone := f.newUser(t, f.app.ID, "gone@example.test", "")
	if err := f.svc.DeleteUser(ctx, f.app.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	list := func(appID, userID string) error { _, err := f.svc.ListSessions(ctx, appID, userID, ""); return err }
	one := func(appID, userID, sessionID string) error { return f.svc.RevokeSession(ctx, appID, userID, sessionID) }
	all := func(appID, userID string) error { return f.svc.RevokeSessions(ctx, appID, userID) }
	for _, c := range []struct {
		name  string
		err   error
		field string // "" for not found
	}{
		{"list: userId not a UUID", list(f.app.ID, "grace@example.test"), "userId"},
		{"list: unknown user", list(f.app.ID, uuid.NewString()), ""},
		{"list: another app's user", list(other.ID, u.ID), ""},
		{"list: a deleted user", list(f.app.ID, gone.ID), ""},
		{"revoke one: userId not a UUID", one(f.app.ID, "me", sid), "userId"},
		{"revoke one: sessionId not a UUID", one(f.app.ID, u.ID, "current"), "sessionId"},
		{"revoke one: unknown session", one(f.app.ID, u.ID, uuid.NewString()), ""},
		{"revoke one: another user's session", one(f.app.ID, u.ID, strangerSID), ""},
		{"revoke one: the session under another app", one(other.ID, u.ID, sid), ""},
		{"revoke all: userId not a UUID", all(f.app.ID, ""), "userId"},
		{"revoke all: another app's user", all(other.ID, u.ID), ""},
		{"revoke all: a deleted user", all(f.app.ID, gone.ID), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.field != "" {
				wantInvalid(t, c.err, c.field)
			} else {
				wantNotFound(t, c.err)
			}
		})
	}
	for _, who := range []struct{ userID, sessionID string }{{u.ID, sid}, {stranger.ID, strangerSID}} {
		if got := f.sessions(t, who.userID, ""); len(got) != 1 || got[0].ID != who.sessionID {
			t.Errorf("sessions of %s after the refusals = %+v, want %s alone", who.userID, got, who.sessionID)
		}
	}
}

func TestFreezingAndDeletingRevokeEverySessionWithTheirReason(t *testing.T) {
	for _, c := range []struct {
		reason string
		act    func(f *fixture, userID string) error
	}{
		{"frozen", func(f *fixture, userID string) error {
			return f.svc.SetAccessStatus(context.Background(), f.app.ID, f.app.ID, userID, "0")
		}},
		{"deleted", func(f *fixture, userID string) error { return f.svc.DeleteUser(context.Background(), f.app.ID, userID) }},
	} {
		t.Run(c.reason, func(t *testing.T) {
			f := newFixture(t)
			a, u := f.session(t, "grace@example.test")
			b, _ := f.session(t, "grace@example.test")
			want := []string{claimsOf(t, a.AccessToken, 1)["sid"].(string), claimsOf(t, b.AccessToken, 1)["sid"].(string)}
			slices.Sort(want)
			f.drain(t)
			if err := c.act(f, u.ID); err != nil {
				t.Fatal(err)
			}
			evs := sessionsRevoked(t, f.drain(t))
			if len(evs) != 1 || evs[0].GetReason() != c.reason || !evs[0].GetAll() || !slices.Equal(evs[0].GetSessionIds(), want) || evs[0].GetUserId() != u.ID {
				t.Fatalf("sessions-revoked events = %v, want one for %v with reason %s", evs, want, c.reason)
			}
			// Repeating the freeze finds nothing live: no second event.
			if c.reason == "frozen" {
				if err := c.act(f, u.ID); err != nil {
					t.Fatal(err)
				}
				if evs := sessionsRevoked(t, f.drain(t)); len(evs) != 0 {
					t.Errorf("a repeated freeze wrote %v", evs)
				}
			}
		})
	}
}

func TestSignInRefusesAUserAgentThatBreaksTheTextRuleOrIsTooLong(t *testing.T) {
	f := newFixture(t)
	f.signUp(t, "grace@example.test")
	for _, ua := range []string{"Mozilla\x00/5.0", "Mozilla/5.0\n", strings.Repeat("a", domain.MaxUserAgent+1)} {
		_, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: "grace@example.test", Password: goodPassword, ClientIP: clientIP, UserAgent: ua})
		wantInvalid(t, err, "user_agent")
		_, err = f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: "new@example.test", Password: goodPassword, ClientIP: clientIP, UserAgent: ua})
		wantInvalid(t, err, "user_agent")
	}
	if _, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: "grace@example.test", Password: goodPassword, ClientIP: clientIP, UserAgent: strings.Repeat("é", domain.MaxUserAgent)}); err != nil {
		t.Errorf("a user agent of exactly %d characters: %v", domain.MaxUserAgent, err)
	}
}

func TestAReusedRefreshTokenEndsItsSessionWithReasonTokenReuse(t *testing.T) {
	f := newFixture(t)
	tok, u := f.session(t, "grace@example.test")
	other, _ := f.session(t, "grace@example.test")
	sid := claimsOf(t, tok.AccessToken, 1)["sid"].(string)
	next, err := f.refresh(tok.RefreshToken, "n")
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	if _, err := f.refresh(tok.RefreshToken, "n"); codeOf(err) != codes.InvalidArgument {
		t.Fatalf("a rotated token shown again: %v, want InvalidArgument", err)
	}
	evs := sessionsRevoked(t, f.drain(t))
	if len(evs) != 1 || evs[0].GetReason() != "token_reuse" || evs[0].GetAll() || !slices.Equal(evs[0].GetSessionIds(), []string{sid}) || evs[0].GetUserId() != u.ID {
		t.Fatalf("sessions-revoked events = %v, want one for %s with reason token_reuse", evs, sid)
	}
	if _, err := f.refresh(next.RefreshToken, "n"); codeOf(err) != codes.InvalidArgument {
		t.Errorf("the thief's or the owner's newer token: %v, want InvalidArgument", err)
	}
	// Showing it once more finds the session ended: no second event. The user's other session lives.
	if _, err := f.refresh(tok.RefreshToken, "n"); codeOf(err) != codes.InvalidArgument {
		t.Errorf("a third showing: %v, want InvalidArgument", err)
	}
	if evs := sessionsRevoked(t, f.drain(t)); len(evs) != 0 {
		t.Errorf("a revoked session was revoked again: %v", evs)
	}
	if _, err := f.refresh(other.RefreshToken, "n"); err != nil {
		t.Errorf("the user's other session: %v", err)
	}
}
