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

func newFactor(appID, userID string, created time.Time) domain.Factor {
	return domain.Factor{ID: uuid.NewString(), AppID: appID, UserID: userID, Kind: domain.FactorTOTP,
		SealedSecret: []byte{9, 8, 7}, CreatedAt: created}
}

// codesOf mints recovery codes for the user under a fixed test key.
func codesOf(t *testing.T, appID, userID string) ([]string, []domain.RecoveryCode) {
	t.Helper()
	plain, stored, err := domain.NewRecoveryCodes(appID, userID, t0, []byte("test key"))
	if err != nil {
		t.Fatal(err)
	}
	return plain, stored
}

// confirmed seeds a user with a confirmed TOTP factor (last step 100) and recovery codes.
func confirmed(t *testing.T, s app.Store, a domain.App, email string) (domain.User, domain.Factor, []string) {
	t.Helper()
	ctx := context.Background()
	u := seedUser(t, s, newUser(a.ID, email))
	f := newFactor(a.ID, u.ID, t0)
	if err := s.SavePendingFactor(ctx, f); err != nil {
		t.Fatal(err)
	}
	plain, stored := codesOf(t, a.ID, u.ID)
	if err := s.ConfirmFactor(ctx, a.ID, u.ID, f.ID, 100, t0.Add(time.Minute), stored); err != nil {
		t.Fatal(err)
	}
	return u, f, plain
}

func testFactors(t *testing.T, newStore Factory) {
	ctx := context.Background()
	key := []byte("test key")

	t.Run("a pending factor is listed unconfirmed and a newer pending one replaces it", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "pending@example.test"))
		first := newFactor(a.ID, u.ID, t0)
		if err := s.SavePendingFactor(ctx, first); err != nil {
			t.Fatal(err)
		}
		second := newFactor(a.ID, u.ID, t0.Add(time.Minute))
		second.SealedSecret = []byte{1}
		if err := s.SavePendingFactor(ctx, second); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListFactors(ctx, a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "factors", got, []domain.Factor{second})
		wantNotFound(t, "confirming the replaced factor", s.ConfirmFactor(ctx, a.ID, u.ID, first.ID, 1, t0, nil))
	})

	t.Run("a factor of an unknown user is not stored", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		wantNotFound(t, "SavePendingFactor", s.SavePendingFactor(ctx, newFactor(a.ID, uuid.NewString(), t0)))
	})

	t.Run("confirming stores the step, the recovery codes and the events together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "confirm@example.test"))
		f := newFactor(a.ID, u.ID, t0)
		if err := s.SavePendingFactor(ctx, f); err != nil {
			t.Fatal(err)
		}
		_, stored := codesOf(t, a.ID, u.ID)
		ev := mustEvent(t, identityv1.EventUserUpdated, a.ID)
		if err := s.ConfirmFactor(ctx, a.ID, u.ID, f.ID, 42, t0.Add(time.Minute), stored, ev); err != nil {
			t.Fatal(err)
		}
		got, _ := s.ListFactors(ctx, a.ID, u.ID)
		at := t0.Add(time.Minute)
		f.LastStep, f.ConfirmedAt = 42, &at
		wantEqual(t, "confirmed factor", got, []domain.Factor{f})
		n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID)
		wantEqual(t, "recovery codes", n, domain.RecoveryCodeCount)
		wantEqual(t, "events", pendingIDs(t, outbox), []string{ev.ID})
		wantNotFound(t, "confirming twice", s.ConfirmFactor(ctx, a.ID, u.ID, f.ID, 43, t0, nil))
		if err := s.SavePendingFactor(ctx, newFactor(a.ID, u.ID, t0.Add(time.Hour))); !errors.Is(err, domain.ErrFactorEnrolled) {
			t.Errorf("a new enrolment beside a confirmed factor: %v, want ErrFactorEnrolled", err)
		}
		got, _ = s.ListFactors(ctx, a.ID, u.ID)
		wantEqual(t, "factor after the refused enrolment", got, []domain.Factor{f})
	})

	t.Run("a user holds several passkeys beside the authenticator, and adding one keeps the recovery codes", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u, totp, _ := confirmed(t, s, a, "passkeys@example.test")
		var keys []domain.Factor
		for i := range 2 {
			f := newFactor(a.ID, u.ID, t0.Add(time.Duration(i+1)*time.Hour))
			f.Kind = domain.FactorPasskey
			if err := s.SavePendingFactor(ctx, f); err != nil {
				t.Fatalf("passkey %d: %v", i, err)
			}
			if err := s.ConfirmFactor(ctx, a.ID, u.ID, f.ID, 7, f.CreatedAt, nil); err != nil {
				t.Fatalf("confirm passkey %d: %v", i, err)
			}
			at := f.CreatedAt
			f.ConfirmedAt, f.LastStep = &at, 7
			keys = append(keys, f)
		}
		got, _ := s.ListFactors(ctx, a.ID, u.ID)
		at := t0.Add(time.Minute)
		totp.ConfirmedAt, totp.LastStep = &at, 100
		wantEqual(t, "factors", got, append([]domain.Factor{totp}, keys...))
		n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID)
		wantEqual(t, "recovery codes kept", n, domain.RecoveryCodeCount)
	})

	t.Run("a time step is accepted once and never an earlier one", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u, f, _ := confirmed(t, s, a, "steps@example.test")
		for _, c := range []struct {
			step int64
			want error
		}{{100, domain.ErrCodeReplayed}, {99, domain.ErrCodeReplayed}, {101, nil}, {101, domain.ErrCodeReplayed}, {103, nil}, {102, domain.ErrCodeReplayed}} {
			if err := s.UseFactorStep(ctx, a.ID, u.ID, f.ID, c.step); !errors.Is(err, c.want) {
				t.Errorf("step %d: %v, want %v", c.step, err, c.want)
			}
		}
		wantNotFound(t, "another user's factor", s.UseFactorStep(ctx, a.ID, uuid.NewString(), f.ID, 200))
	})

	t.Run("of concurrent uses of one step exactly one succeeds", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u, f, _ := confirmed(t, s, a, "race@example.test")
		ok, errs := concurrently(8, func() error { return s.UseFactorStep(ctx, a.ID, u.ID, f.ID, 150) })
		wantEqual(t, "successful uses", ok, 1)
		for _, err := range errs {
			if !errors.Is(err, domain.ErrCodeReplayed) {
				t.Errorf("losing use: %v, want ErrCodeReplayed", err)
			}
		}
	})

	t.Run("a pending factor takes no codes", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "unconfirmed@example.test"))
		f := newFactor(a.ID, u.ID, t0)
		if err := s.SavePendingFactor(ctx, f); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, "UseFactorStep on a pending factor", s.UseFactorStep(ctx, a.ID, u.ID, f.ID, 5))
	})

	t.Run("a recovery code works once, with the count of those left", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u, _, plain := confirmed(t, s, a, "recovery@example.test")
		var left int
		var ev events.Event
		use := func(code string) error {
			return s.UseRecoveryCode(ctx, a.ID, u.ID, domain.RecoveryCodeHash(u.ID, code, key), t0.Add(time.Hour), func(n int) ([]events.Event, error) {
				left, ev = n, mustEvent(t, identityv1.EventUserUpdated, a.ID)
				return []events.Event{ev}, nil
			})
		}
		if err := use(plain[3]); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "codes left", left, domain.RecoveryCodeCount-1)
		wantEqual(t, "events", pendingIDs(t, outbox), []string{ev.ID})
		wantNotFound(t, "the same code again", use(plain[3]))
		wantNotFound(t, "a code of nobody", use("aaaaa-aaaaa"))
		n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID)
		wantEqual(t, "unused codes", n, domain.RecoveryCodeCount-1)
		err := s.UseRecoveryCode(ctx, a.ID, u.ID, domain.RecoveryCodeHash(u.ID, plain[4], key), t0, func(int) ([]events.Event, error) { return nil, errBoom })
		if !errors.Is(err, errBoom) {
			t.Fatalf("failing fn: %v", err)
		}
		if err := use(plain[4]); err != nil {
			t.Errorf("a code whose use failed is still unused: %v", err)
		}
	})

	t.Run("of concurrent uses of one recovery code exactly one succeeds", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u, _, plain := confirmed(t, s, a, "coderace@example.test")
		hash := domain.RecoveryCodeHash(u.ID, plain[0], key)
		ok, _ := concurrently(8, func() error {
			return s.UseRecoveryCode(ctx, a.ID, u.ID, hash, t0, func(int) ([]events.Event, error) { return nil, nil })
		})
		wantEqual(t, "successful uses", ok, 1)
	})

	t.Run("replacing recovery codes retires the old ones", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u, _, old := confirmed(t, s, a, "regen@example.test")
		fresh, stored := codesOf(t, a.ID, u.ID)
		if err := s.ReplaceRecoveryCodes(ctx, a.ID, u.ID, stored); err != nil {
			t.Fatal(err)
		}
		none := func(int) ([]events.Event, error) { return nil, nil }
		wantNotFound(t, "an old code", s.UseRecoveryCode(ctx, a.ID, u.ID, domain.RecoveryCodeHash(u.ID, old[0], key), t0, none))
		if err := s.UseRecoveryCode(ctx, a.ID, u.ID, domain.RecoveryCodeHash(u.ID, fresh[0], key), t0, none); err != nil {
			t.Errorf("a new code: %v", err)
		}
		wantNotFound(t, "codes of an unknown user", s.ReplaceRecoveryCodes(ctx, a.ID, uuid.NewString(), stored))
	})

	t.Run("removing factors deletes them and the codes and revokes every session, with the events", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u, f, _ := confirmed(t, s, a, "remove@example.test")
		other, _, _ := confirmed(t, s, a, "other@example.test")
		fam := newFamily(a.ID, u.ID)
		if err := s.CreateRefreshFamily(ctx, fam, newRefresh(t0, time.Hour)); err != nil {
			t.Fatal(err)
		}
		otherFam := newFamily(a.ID, other.ID)
		if err := s.CreateRefreshFamily(ctx, otherFam, newRefresh(t0, time.Hour)); err != nil {
			t.Fatal(err)
		}
		ev := mustEvent(t, identityv1.EventSessionsRevoked, a.ID)
		var removed []domain.Factor
		var revoked []string
		if err := s.RemoveFactors(ctx, a.ID, u.ID, t0.Add(time.Minute), func(r []domain.Factor, sessions []string) ([]events.Event, error) {
			removed, revoked = r, sessions
			return []events.Event{ev}, nil
		}); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "removed", slices.Collect(func(yield func(string) bool) {
			for _, x := range removed {
				yield(x.ID)
			}
		}), []string{f.ID})
		wantEqual(t, "revoked", revoked, []string{fam.ID})
		wantEqual(t, "events", pendingIDs(t, outbox), []string{ev.ID})
		got, _ := s.ListFactors(ctx, a.ID, u.ID)
		wantEqual(t, "factors left", len(got), 0)
		n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID)
		wantEqual(t, "codes left", n, 0)
		live, _ := s.ListSessions(ctx, a.ID, u.ID, t0.Add(time.Minute), 10)
		wantEqual(t, "sessions left", len(live), 0)
		kept, _ := s.ListFactors(ctx, a.ID, other.ID)
		wantEqual(t, "the other user's factors", len(kept), 1)
		otherLive, _ := s.ListSessions(ctx, a.ID, other.ID, t0.Add(time.Minute), 10)
		wantEqual(t, "the other user's sessions", len(otherLive), 1)
	})

	t.Run("a failing removal changes nothing", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u, _, _ := confirmed(t, s, a, "keep@example.test")
		err := s.RemoveFactors(ctx, a.ID, u.ID, t0, func([]domain.Factor, []string) ([]events.Event, error) { return nil, errBoom })
		if !errors.Is(err, errBoom) {
			t.Fatalf("RemoveFactors: %v", err)
		}
		got, _ := s.ListFactors(ctx, a.ID, u.ID)
		wantEqual(t, "factors kept", len(got), 1)
		n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID)
		wantEqual(t, "codes kept", n, domain.RecoveryCodeCount)
	})
}
