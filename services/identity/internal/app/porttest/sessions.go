package porttest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// noEvents is a RevokeSessions callback for cases that look at the families only.
func noEvents([]string) ([]events.Event, error) { return nil, nil }

func testSessions(t *testing.T, newStore Factory) {
	ctx := context.Background()
	// firsts are the first tokens of the families seed stored, by family id.
	firsts := map[string]domain.RefreshToken{}
	// seed stores a family of the user started at t0 whose first token lives ttl.
	seed := func(t *testing.T, s app.Store, appID, userID string, ttl time.Duration) domain.RefreshFamily {
		t.Helper()
		f, first := newFamily(appID, userID), newRefresh(t0, ttl)
		f.ExpiresAt = first.ExpiresAt
		if err := s.CreateRefreshFamily(ctx, f, first); err != nil {
			t.Fatal(err)
		}
		firsts[f.ID] = first
		return f
	}
	ids := func(fs []domain.RefreshFamily) []string {
		out := []string{}
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return out
	}
	list := func(t *testing.T, s app.Store, appID, userID string, now time.Time) []domain.RefreshFamily {
		t.Helper()
		got, err := s.ListSessions(ctx, appID, userID, now, 100)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("the live families of the user are listed, most recently used first, with every field", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		stranger := seedUser(t, s, newUser(a.ID, "s@example.test"))
		elsewhere := seedUser(t, s, newUser(other.ID, "e@example.test"))
		older := seed(t, s, a.ID, u.ID, time.Hour)
		used := seed(t, s, a.ID, u.ID, time.Hour)
		seed(t, s, a.ID, u.ID, time.Minute) // expired by the time of the list
		revoked := seed(t, s, a.ID, u.ID, time.Hour)
		seed(t, s, a.ID, stranger.ID, time.Hour)
		seed(t, s, other.ID, elsewhere.ID, time.Hour)
		if _, err := s.RevokeSessions(ctx, a.ID, u.ID, revoked.ID, t0, noEvents); err != nil {
			t.Fatal(err)
		}
		// A rotation makes the family the most recently used and moves its end.
		next := newRefresh(t0.Add(10*time.Minute), time.Hour)
		if err := s.RotateRefreshToken(ctx, firsts[used.ID].Hash, next); err != nil {
			t.Fatal(err)
		}
		used.LastUsedAt, used.ExpiresAt = next.CreatedAt, next.ExpiresAt

		now := t0.Add(30 * time.Minute)
		wantEqual(t, "sessions", list(t, s, a.ID, u.ID, now), []domain.RefreshFamily{used, older})
		// The first family's hour is up, the rotated one lives on.
		wantEqual(t, "sessions after the first token's hour", ids(list(t, s, a.ID, u.ID, t0.Add(time.Hour))), []string{used.ID})
		wantEqual(t, "user of another app asked under this app", list(t, s, a.ID, elsewhere.ID, now), []domain.RefreshFamily{})
		wantEqual(t, "unknown user", list(t, s, a.ID, uuid.NewString(), now), []domain.RefreshFamily{})
		wantEqual(t, "malformed user id", list(t, s, a.ID, "nope", now), []domain.RefreshFamily{})
	})

	t.Run("the list holds at most limit sessions, the most recently used", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		var all []domain.RefreshFamily
		for i := range 3 {
			f, first := newFamily(a.ID, u.ID), newRefresh(t0, time.Hour)
			f.LastUsedAt = t0.Add(time.Duration(i) * time.Minute)
			f.ExpiresAt = first.ExpiresAt
			if err := s.CreateRefreshFamily(ctx, f, first); err != nil {
				t.Fatal(err)
			}
			all = append(all, f)
		}
		got, err := s.ListSessions(ctx, a.ID, u.ID, t0.Add(5*time.Minute), 2)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "two newest", ids(got), []string{all[2].ID, all[1].ID})
	})

	t.Run("revoking one session revokes that family only and commits the event with it", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		one, two := seed(t, s, a.ID, u.ID, time.Hour), seed(t, s, a.ID, u.ID, time.Hour)
		now := t0.Add(time.Minute)
		var ev events.Event
		got, err := s.RevokeSessions(ctx, a.ID, u.ID, one.ID, now, func(revoked []string) ([]events.Event, error) {
			wantEqual(t, "fn's ids", revoked, []string{one.ID})
			ev = mustEvent(t, identityv1.EventSessionsRevoked, a.ID)
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "revoked", got, []string{one.ID})
		wantEqual(t, "sessions left", ids(list(t, s, a.ID, u.ID, now)), []string{two.ID})
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})

		// Revoked now, it is no session any more: not found, and no second event.
		_, err = s.RevokeSessions(ctx, a.ID, u.ID, one.ID, now, func([]string) ([]events.Event, error) {
			t.Error("fn called for a revoked session")
			return nil, nil
		})
		wantNotFound(t, "revoking a revoked session", err)
		wantEqual(t, "outbox after the refused revocation", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("a session of another user or app, an expired or unknown one is not found and nothing changes", func(t *testing.T) {
		s, outbox := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		stranger := seedUser(t, s, newUser(a.ID, "s@example.test"))
		elsewhere := seedUser(t, s, newUser(other.ID, "e@example.test"))
		mine := seed(t, s, a.ID, u.ID, time.Hour)
		expired := seed(t, s, a.ID, u.ID, time.Minute)
		theirs := seed(t, s, a.ID, stranger.ID, time.Hour)
		foreign := seed(t, s, other.ID, elsewhere.ID, time.Hour)
		now := t0.Add(30 * time.Minute)
		refuse := func([]string) ([]events.Event, error) {
			t.Error("fn called for a refused revocation")
			return nil, nil
		}
		for _, c := range []struct{ what, appID, userID, sessionID string }{
			{"another user's session", a.ID, u.ID, theirs.ID},
			{"another app's session", a.ID, u.ID, foreign.ID},
			{"the session under another app", other.ID, u.ID, mine.ID},
			{"an expired session", a.ID, u.ID, expired.ID},
			{"an unknown session", a.ID, u.ID, uuid.NewString()},
			{"a malformed session id", a.ID, u.ID, "nope"},
		} {
			_, err := s.RevokeSessions(ctx, c.appID, c.userID, c.sessionID, now, refuse)
			wantNotFound(t, c.what, err)
		}
		wantEqual(t, "user's sessions", ids(list(t, s, a.ID, u.ID, now)), []string{mine.ID})
		wantEqual(t, "stranger's sessions", ids(list(t, s, a.ID, stranger.ID, now)), []string{theirs.ID})
		wantEqual(t, "other app's sessions", ids(list(t, s, other.ID, elsewhere.ID, now)), []string{foreign.ID})
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("revoking all revokes every family of the user and names the live ones", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		stranger := seedUser(t, s, newUser(a.ID, "s@example.test"))
		one, two := seed(t, s, a.ID, u.ID, time.Hour), seed(t, s, a.ID, u.ID, time.Hour)
		expired := seed(t, s, a.ID, u.ID, time.Minute)
		theirs := seed(t, s, a.ID, stranger.ID, time.Hour)
		now := t0.Add(30 * time.Minute)
		want := []string{one.ID, two.ID}
		slices.Sort(want)
		var ev events.Event
		got, err := s.RevokeSessions(ctx, a.ID, u.ID, "", now, func(revoked []string) ([]events.Event, error) {
			wantEqual(t, "fn's ids", revoked, want)
			ev = mustEvent(t, identityv1.EventSessionsRevoked, a.ID)
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "revoked", got, want)
		wantEqual(t, "sessions left", list(t, s, a.ID, u.ID, t0), []domain.RefreshFamily{})
		wantEqual(t, "stranger's sessions", ids(list(t, s, a.ID, stranger.ID, now)), []string{theirs.ID})
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
		for _, f := range []domain.RefreshFamily{one, two, expired} {
			if _, fam, err := s.GetRefreshToken(ctx, firsts[f.ID].Hash); err != nil || !fam.Revoked {
				t.Errorf("family %s after revoking all: revoked %v, %v", f.ID, fam.Revoked, err)
			}
		}

		// Nothing live is left: no event, no error.
		got, err = s.RevokeSessions(ctx, a.ID, u.ID, "", now, func([]string) ([]events.Event, error) {
			t.Error("fn called with no live session")
			return nil, nil
		})
		if err != nil || len(got) != 0 {
			t.Errorf("revoking all again = %v, %v; want none, nil", got, err)
		}
		wantEqual(t, "outbox after revoking nothing", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("a failing fn revokes nothing", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		f := seed(t, s, a.ID, u.ID, time.Hour)
		for _, sessionID := range []string{f.ID, ""} {
			_, err := s.RevokeSessions(ctx, a.ID, u.ID, sessionID, t0, func([]string) ([]events.Event, error) { return nil, errBoom })
			if !errors.Is(err, errBoom) {
				t.Errorf("error = %v, want %v", err, errBoom)
			}
		}
		wantEqual(t, "sessions", ids(list(t, s, a.ID, u.ID, t0)), []string{f.ID})
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("a user change ending sessions commits the user, the revocation and the events together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		other := seedUser(t, s, newUser(a.ID, "o@example.test"))
		short := seed(t, s, a.ID, u.ID, time.Minute) // expired at the change: revoked, not reported
		f1, f2 := seed(t, s, a.ID, u.ID, time.Hour), seed(t, s, a.ID, u.ID, time.Hour)
		kept := seed(t, s, a.ID, other.ID, time.Hour)
		changed := mustEvent(t, identityv1.EventUserPasswordChanged, a.ID)
		revokedEv := mustEvent(t, identityv1.EventSessionsRevoked, a.ID)
		at := t0.Add(10 * time.Minute)
		var reported []string
		got, err := s.UpdateUserEndingSessions(ctx, a.ID, u.ID, at, func(x *domain.User) ([]events.Event, error) {
			x.PasswordHash, x.UpdatedAt = "new-hash", at
			return []events.Event{changed}, nil
		}, func(revoked []string) ([]events.Event, error) {
			reported = revoked
			return []events.Event{revokedEv}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := u
		want.PasswordHash, want.UpdatedAt = "new-hash", at
		wantEqual(t, "result", got, want)
		stored, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "stored user", stored, want)
		wantEqual(t, "sessions given to sessionsRevoked", reported, sorted(f1.ID, f2.ID))
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{changed.ID, revokedEv.ID})
		for _, f := range []domain.RefreshFamily{short, f1, f2} {
			if _, fam, err := s.GetRefreshToken(ctx, firsts[f.ID].Hash); err != nil || !fam.Revoked {
				t.Errorf("family %s: revoked %v, %v; want revoked", f.ID, fam.Revoked, err)
			}
		}
		wantEqual(t, "the other user's sessions", ids(list(t, s, a.ID, other.ID, at)), []string{kept.ID})

		// Nothing live is left: the change is stored without a sessions event.
		again := mustEvent(t, identityv1.EventUserPasswordChanged, a.ID)
		if _, err := s.UpdateUserEndingSessions(ctx, a.ID, u.ID, at, func(*domain.User) ([]events.Event, error) {
			return []events.Event{again}, nil
		}, func([]string) ([]events.Event, error) {
			t.Error("sessionsRevoked called with no live session")
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "outbox after a change with no live session", pendingIDs(t, outbox), []string{changed.ID, revokedEv.ID, again.ID})
	})

	t.Run("a user change ending sessions that fails, or of an unknown user, applies nothing", func(t *testing.T) {
		s, outbox := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		seedUser(t, s, newUser(a.ID, "taken@example.test"))
		f := seed(t, s, a.ID, u.ID, time.Hour)
		change := func(x *domain.User) ([]events.Event, error) {
			x.PasswordHash = "new-hash"
			return []events.Event{mustEvent(t, identityv1.EventUserPasswordChanged, a.ID)}, nil
		}
		report := func([]string) ([]events.Event, error) {
			return []events.Event{mustEvent(t, identityv1.EventSessionsRevoked, a.ID)}, nil
		}
		cases := []struct {
			name          string
			appID, userID string
			fn            func(*domain.User) ([]events.Event, error)
			report        func([]string) ([]events.Event, error)
			want          error
		}{
			{"fn fails", a.ID, u.ID, func(x *domain.User) ([]events.Event, error) { x.PasswordHash = "new-hash"; return nil, errBoom }, report, errBoom},
			{"sessionsRevoked fails", a.ID, u.ID, change, func([]string) ([]events.Event, error) { return nil, errBoom }, errBoom},
			{"the email is another user's", a.ID, u.ID, func(x *domain.User) ([]events.Event, error) { x.Email = "TAKEN@example.test"; return nil, nil }, report, domain.ErrEmailTaken},
			{"unknown user", a.ID, uuid.NewString(), change, report, domain.ErrNotFound},
			{"the user of another app", other.ID, u.ID, change, report, domain.ErrNotFound},
			{"malformed user id", a.ID, "nope", change, report, domain.ErrNotFound},
		}
		for _, c := range cases {
			if _, err := s.UpdateUserEndingSessions(ctx, c.appID, c.userID, t0, c.fn, c.report); !errors.Is(err, c.want) {
				t.Errorf("%s: error = %v, want %v", c.name, err, c.want)
			}
		}
		stored, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user", stored, u)
		wantEqual(t, "sessions", ids(list(t, s, a.ID, u.ID, t0)), []string{f.ID})
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})
}
