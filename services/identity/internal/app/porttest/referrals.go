package porttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/identity/internal/domain"
)

func newReferral(t *testing.T, appID, inviterID string, created time.Time) domain.Referral {
	t.Helper()
	_, r, err := domain.NewReferral(appID, inviterID, created)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testReferrals(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("create, get and delete", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		r := newReferral(t, a.ID, u.ID, t0)
		if err := s.CreateReferral(ctx, r, t0.Add(-24*time.Hour), 20); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetReferral(ctx, r.Hash)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetReferral", got, r)
		if err := s.DeleteReferral(ctx, r.Hash); err != nil {
			t.Fatal(err)
		}
		_, err = s.GetReferral(ctx, r.Hash)
		wantNotFound(t, "deleted referral", err)
		if err := s.DeleteReferral(ctx, r.Hash); err != nil {
			t.Errorf("deleting an absent referral: %v", err)
		}
	})

	t.Run("the inviter must be a user of the app", func(t *testing.T) {
		s, _ := newStore(t)
		a, b := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		wantNotFound(t, "unknown inviter", s.CreateReferral(ctx, newReferral(t, a.ID, uuid.NewString(), t0), t0, 20))
		wantNotFound(t, "inviter of another app", s.CreateReferral(ctx, newReferral(t, b.ID, u.ID, t0), t0, 20))
	})

	t.Run("the limit counts the inviter's referrals since the given instant", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		other := seedUser(t, s, newUser(a.ID, "grace@example.test"))
		create := func(inviter string, at time.Time) error {
			return s.CreateReferral(ctx, newReferral(t, a.ID, inviter, at), at.Add(-24*time.Hour), 3)
		}
		// One invite a day before: outside the window of the later ones.
		if err := create(u.ID, t0.Add(-24*time.Hour-time.Second)); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := create(u.ID, t0.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatalf("invite %d: %v", i+1, err)
			}
		}
		if err := create(u.ID, t0.Add(time.Minute)); !errors.Is(err, domain.ErrInviteLimit) {
			t.Errorf("fourth invite in the window: error = %v, want ErrInviteLimit", err)
		}
		if err := create(other.ID, t0.Add(time.Minute)); err != nil {
			t.Errorf("another inviter is not limited by the first: %v", err)
		}
		// 24 h after the first counted invite it leaves the window (created_at >= since).
		if err := create(u.ID, t0.Add(24*time.Hour+time.Microsecond)); err != nil {
			t.Errorf("invite once the first left the window: %v", err)
		}
	})

	t.Run("concurrent invites never pass the limit together", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		pending := make(chan domain.Referral, 8)
		for range 8 {
			pending <- newReferral(t, a.ID, u.ID, t0)
		}
		ok, errs := concurrently(8, func() error {
			return s.CreateReferral(ctx, <-pending, t0.Add(-time.Hour), 5)
		})
		if ok != 5 {
			t.Errorf("%d invites stored, want 5", ok)
		}
		for _, err := range errs {
			if !errors.Is(err, domain.ErrInviteLimit) {
				t.Errorf("error = %v, want ErrInviteLimit", err)
			}
		}
	})
}
