package porttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

var codeKey = []byte("porttest code key")

func newChallenge(t *testing.T, purpose domain.ChallengePurpose, appID, userID string, created time.Time) domain.Challenge {
	t.Helper()
	cont := domain.Continuation{ClientID: appID, RedirectURI: "https://example.test/cb", State: "st", Nonce: "n", Scope: "openid", Service: "idpB"}
	c, _, err := domain.NewChallenge(purpose, appID, userID, "ada@example.test", cont, created, codeKey)
	if err != nil {
		t.Fatal(err)
	}
	if purpose == domain.PurposeSecondFactor {
		c.Methods = []string{domain.AMRPassword}
	}
	return c
}

func testChallenges(t *testing.T, newStore Factory) {
	ctx := context.Background()
	seed := func(t *testing.T, s app.Store, c domain.Challenge) domain.Challenge {
		t.Helper()
		if err := s.CreateChallenge(ctx, c); err != nil {
			t.Fatalf("CreateChallenge: %v", err)
		}
		return c
	}
	noEffect := func(domain.Challenge, *domain.User) (app.ChallengeEffect, error) { return app.ChallengeEffect{}, nil }

	t.Run("create, then get by link hash and by id", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		c := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, t0))
		got, err := s.GetChallengeByLink(ctx, c.LinkHash)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetChallengeByLink", got, c)
		got, err = s.GetChallenge(ctx, a.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetChallenge", got, c)
		_, err = s.GetChallengeByLink(ctx, domain.HashSecret("unknown"))
		wantNotFound(t, "unknown link", err)
		_, err = s.GetChallenge(ctx, seedApp(t, s).ID, c.ID)
		wantNotFound(t, "challenge of another app", err)
		_, err = s.GetChallenge(ctx, a.ID, "not-a-uuid")
		wantNotFound(t, "malformed id", err)
	})

	t.Run("the user must be a user of the app", func(t *testing.T) {
		s, _ := newStore(t)
		a, b := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		wantNotFound(t, "unknown user", s.CreateChallenge(ctx, newChallenge(t, domain.PurposeVerifyEmail, a.ID, uuid.NewString(), t0)))
		wantNotFound(t, "user of another app", s.CreateChallenge(ctx, newChallenge(t, domain.PurposeVerifyEmail, b.ID, u.ID, t0)))
	})

	t.Run("a new challenge retires the live ones of its user and purpose only", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		other := seedUser(t, s, newUser(a.ID, "grace@example.test"))
		old := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, t0))
		reset := seed(t, s, newChallenge(t, domain.PurposeResetPassword, a.ID, u.ID, t0))
		others := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, other.ID, t0))
		later := t0.Add(time.Minute)
		seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, later))
		got, _ := s.GetChallenge(ctx, a.ID, old.ID)
		if got.UsedAt == nil || !got.UsedAt.Equal(later) {
			t.Errorf("older challenge's UsedAt = %v, want %v", got.UsedAt, later)
		}
		for _, c := range []domain.Challenge{reset, others} {
			if got, _ := s.GetChallenge(ctx, a.ID, c.ID); got.UsedAt != nil {
				t.Errorf("challenge %s of another purpose or user was retired", c.Purpose)
			}
		}
	})

	t.Run("challenges expired before a new one are forgotten", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		expired := seed(t, s, newChallenge(t, domain.PurposeResetPassword, a.ID, u.ID, t0))
		live := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, t0))
		seed(t, s, newChallenge(t, domain.PurposeChangeEmail, a.ID, u.ID, t0.Add(time.Hour)))
		_, err := s.GetChallenge(ctx, a.ID, expired.ID)
		wantNotFound(t, "expired challenge", err)
		if _, err := s.GetChallenge(ctx, a.ID, live.ID); err != nil {
			t.Errorf("a live challenge was forgotten: %v", err)
		}
	})

	t.Run("wrong codes count up to the limit, then the challenge is spent", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		c := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, t0))
		for i := 1; i <= domain.MaxCodeAttempts; i++ {
			got, err := s.RecordWrongCode(ctx, a.ID, c.ID, t0)
			if err != nil {
				t.Fatalf("wrong code %d: %v", i, err)
			}
			wantEqual(t, "attempts", got.CodeAttempts, i)
		}
		if _, err := s.RecordWrongCode(ctx, a.ID, c.ID, t0); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("wrong code past the limit: error = %v, want ErrChallengeSpent", err)
		}
		if _, err := s.MeetChallenge(ctx, a.ID, c.ID, t0, noEffect); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("meeting a challenge out of attempts: error = %v, want ErrChallengeSpent", err)
		}
		_, err := s.RecordWrongCode(ctx, seedApp(t, s).ID, c.ID, t0)
		wantNotFound(t, "wrong code against another app's challenge", err)
	})

	t.Run("concurrent wrong codes: exactly the limit counts", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		c := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, t0))
		ok, errs := concurrently(domain.MaxCodeAttempts+4, func() error {
			_, err := s.RecordWrongCode(ctx, a.ID, c.ID, t0)
			return err
		})
		wantEqual(t, "counted wrong codes", ok, domain.MaxCodeAttempts)
		for _, err := range errs {
			if !errors.Is(err, domain.ErrChallengeSpent) {
				t.Errorf("refused wrong code: %v, want ErrChallengeSpent", err)
			}
		}
	})

	t.Run("meeting marks it used and commits the user's change, its events and the revocation together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		other := seedUser(t, s, newUser(a.ID, "grace@example.test"))
		f, first := newFamily(a.ID, u.ID), newRefresh(t0, time.Hour)
		g, otherFirst := newFamily(a.ID, other.ID), newRefresh(t0, time.Hour)
		for _, fam := range []struct {
			f domain.RefreshFamily
			t domain.RefreshToken
		}{{f, first}, {g, otherFirst}} {
			if err := s.CreateRefreshFamily(ctx, fam.f, fam.t); err != nil {
				t.Fatal(err)
			}
		}
		c := seed(t, s, newChallenge(t, domain.PurposeResetPassword, a.ID, u.ID, t0))
		ev := mustEvent(t, identityv1.EventUserUpdated, a.ID)
		revokedEv := mustEvent(t, identityv1.EventSessionsRevoked, a.ID)
		var revoked []string
		at := t0.Add(time.Minute)
		met, err := s.MeetChallenge(ctx, a.ID, c.ID, at, func(got domain.Challenge, x *domain.User) (app.ChallengeEffect, error) {
			wantEqual(t, "challenge given to fn", got, c)
			x.PasswordHash, x.UpdatedAt = "new-hash", at
			return app.ChallengeEffect{Events: []events.Event{ev}, RevokeSessions: true, SessionsRevoked: func(ids []string) ([]events.Event, error) {
				revoked = ids
				return []events.Event{revokedEv}, nil
			}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := u
		want.PasswordHash, want.UpdatedAt = "new-hash", at
		wantEqual(t, "MeetChallenge result", met, want)
		stored, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user after meeting", stored, want)
		got, _ := s.GetChallenge(ctx, a.ID, c.ID)
		if got.UsedAt == nil || !got.UsedAt.Equal(at) {
			t.Errorf("UsedAt = %v, want %v", got.UsedAt, at)
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID, revokedEv.ID})
		wantEqual(t, "sessions given to SessionsRevoked", revoked, []string{f.ID})
		if _, fam, _ := s.GetRefreshToken(ctx, first.Hash); !fam.Revoked {
			t.Error("the user's session was not revoked")
		}
		if _, fam, _ := s.GetRefreshToken(ctx, otherFirst.Hash); fam.Revoked {
			t.Error("another user's session was revoked")
		}
		if _, err := s.MeetChallenge(ctx, a.ID, c.ID, at, noEffect); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("meeting it twice: error = %v, want ErrChallengeSpent", err)
		}
	})

	t.Run("an expired or retired challenge cannot be met", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		c := seed(t, s, newChallenge(t, domain.PurposeResetPassword, a.ID, u.ID, t0))
		if _, err := s.MeetChallenge(ctx, a.ID, c.ID, c.ExpiresAt, noEffect); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("at expiry: error = %v, want ErrChallengeSpent", err)
		}
		seed(t, s, newChallenge(t, domain.PurposeResetPassword, a.ID, u.ID, t0.Add(time.Second)))
		if _, err := s.MeetChallenge(ctx, a.ID, c.ID, t0.Add(time.Second), noEffect); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("retired: error = %v, want ErrChallengeSpent", err)
		}
		_, err := s.MeetChallenge(ctx, seedApp(t, s).ID, c.ID, t0, noEffect)
		wantNotFound(t, "another app's challenge", err)
	})

	t.Run("a failing fn or a taken email writes nothing", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		seedUser(t, s, newUser(a.ID, "taken@example.test"))
		c := seed(t, s, newChallenge(t, domain.PurposeChangeEmail, a.ID, u.ID, t0))
		_, err := s.MeetChallenge(ctx, a.ID, c.ID, t0, func(_ domain.Challenge, x *domain.User) (app.ChallengeEffect, error) {
			x.Email = "changed@example.test"
			return app.ChallengeEffect{Events: []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("error = %v, want fn's error", err)
		}
		_, err = s.MeetChallenge(ctx, a.ID, c.ID, t0, func(_ domain.Challenge, x *domain.User) (app.ChallengeEffect, error) {
			x.Email = "TAKEN@example.test"
			return app.ChallengeEffect{Events: []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}}, nil
		})
		if !errors.Is(err, domain.ErrEmailTaken) {
			t.Fatalf("error = %v, want ErrEmailTaken", err)
		}
		stored, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user", stored, u)
		if got, _ := s.GetChallenge(ctx, a.ID, c.ID); got.UsedAt != nil {
			t.Error("the challenge was used although nothing was written")
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("concurrent meetings: exactly one succeeds", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		c := seed(t, s, newChallenge(t, domain.PurposeVerifyEmail, a.ID, u.ID, t0))
		ok, errs := concurrently(8, func() error {
			_, err := s.MeetChallenge(ctx, a.ID, c.ID, t0, noEffect)
			return err
		})
		wantEqual(t, "successful meetings", ok, 1)
		for _, err := range errs {
			if !errors.Is(err, domain.ErrChallengeSpent) {
				t.Errorf("refused meeting: %v, want ErrChallengeSpent", err)
			}
		}
	})
}
