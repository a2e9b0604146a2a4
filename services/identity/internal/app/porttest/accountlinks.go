package porttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// testAccountSignInMethods covers the account page's removals: a provider link and one second
// factor, each decided by fn inside the store's write.
func testAccountSignInMethods(t *testing.T, newStore Factory) {
	ctx := context.Background()
	link := func(appID, slot, subject, userID string) domain.ProviderLink {
		return domain.ProviderLink{AppID: appID, Slot: slot, Subject: subject, UserID: userID, Email: "ada@idp.test", CreatedAt: t0}
	}

	t.Run("an unlink deletes the link and writes the user's change and its events together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		seed := newUser(a.ID, "ada@example.test")
		seed.IdpAEmailVerified = true
		u := seedUser(t, s, seed)
		a1, b1 := link(a.ID, "idpA", "sub-a", u.ID), link(a.ID, "idpB", "sub-b", u.ID)
		for _, l := range []domain.ProviderLink{a1, b1} {
			if err := s.CreateProviderLink(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		ev := mustEvent(t, identityv1.EventUserProviderLinked, a.ID)
		var gotRemoved domain.ProviderLink
		var gotLeft []domain.ProviderLink
		err := s.DeleteProviderLink(ctx, a.ID, u.ID, "idpA", func(x *domain.User, removed domain.ProviderLink, left []domain.ProviderLink, factors []domain.Factor) ([]events.Event, error) {
			gotRemoved, gotLeft = removed, left
			if len(factors) != 0 {
				t.Errorf("factors of a user without any: %v", factors)
			}
			x.IdpAEmailVerified = false
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "removed link", gotRemoved, a1)
		wantEqual(t, "links left", gotLeft, []domain.ProviderLink{b1})
		_, err = s.GetProviderLink(ctx, a.ID, "idpA", "sub-a")
		wantNotFound(t, "unlinked identity", err)
		got, err := s.GetUser(ctx, a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.IdpAEmailVerified {
			t.Error("the user's change was not stored with the unlink")
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
		if err := s.CreateProviderLink(ctx, link(a.ID, "idpA", "sub-a", u.ID)); err != nil {
			t.Errorf("linking the slot again after the unlink: %v", err)
		}
	})

	t.Run("a refused unlink changes nothing, and a slot without a link or an unknown user is not found", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u, f, _ := confirmed(t, s, a, "ada@example.test")
		l := link(a.ID, "idpA", "sub-a", u.ID)
		if err := s.CreateProviderLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		err := s.DeleteProviderLink(ctx, a.ID, u.ID, "idpA", func(x *domain.User, _ domain.ProviderLink, left []domain.ProviderLink, factors []domain.Factor) ([]events.Event, error) {
			wantEqual(t, "links left", len(left), 0)
			wantEqual(t, "factors", len(factors), 1)
			if len(factors) == 1 && factors[0].ID != f.ID {
				t.Errorf("factor %s, want %s", factors[0].ID, f.ID)
			}
			x.Name = "changed"
			return []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("refused unlink: %v, want fn's error", err)
		}
		if _, err := s.GetProviderLink(ctx, a.ID, "idpA", "sub-a"); err != nil {
			t.Errorf("the refused unlink deleted the link: %v", err)
		}
		if got, _ := s.GetUser(ctx, a.ID, u.ID); got.Name != "" {
			t.Error("the refused unlink changed the user")
		}
		wantEqual(t, "outbox of a refused unlink", pendingIDs(t, outbox), []string{})
		never := func(*domain.User, domain.ProviderLink, []domain.ProviderLink, []domain.Factor) ([]events.Event, error) {
			t.Error("fn ran without a link to delete")
			return nil, nil
		}
		wantNotFound(t, "slot without a link", s.DeleteProviderLink(ctx, a.ID, u.ID, "idpB", never))
		wantNotFound(t, "unknown user", s.DeleteProviderLink(ctx, a.ID, uuid.NewString(), "idpA", never))
		other := seedApp(t, s)
		wantNotFound(t, "user of another app", s.DeleteProviderLink(ctx, other.ID, u.ID, "idpA", never))
	})

	t.Run("removing one factor keeps the others and the recovery codes; the last takes the codes", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u, totp, _ := confirmed(t, s, a, "ada@example.test")
		key := domain.Factor{ID: uuid.NewString(), AppID: a.ID, UserID: u.ID, Kind: domain.FactorPasskey, SealedSecret: []byte{1}, CreatedAt: t0.Add(time.Second)}
		if err := s.SavePendingFactor(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := s.ConfirmFactor(ctx, a.ID, u.ID, key.ID, 0, t0.Add(time.Minute), nil); err != nil {
			t.Fatal(err)
		}
		l := link(a.ID, "idpA", "sub-a", u.ID)
		if err := s.CreateProviderLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		ev := mustEvent(t, identityv1.EventUserUpdated, a.ID)
		err := s.RemoveFactor(ctx, a.ID, u.ID, totp.ID, func(x domain.User, removed domain.Factor, left []domain.Factor, links []domain.ProviderLink) ([]events.Event, error) {
			wantEqual(t, "user", x.ID, u.ID)
			wantEqual(t, "removed", removed.ID, totp.ID)
			wantEqual(t, "factors left", len(left), 1)
			wantEqual(t, "links", links, []domain.ProviderLink{l})
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := s.ListFactors(ctx, a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 1 || fs[0].ID != key.ID {
			t.Errorf("factors after the removal: %v, want the passkey", fs)
		}
		if n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID); n != 10 {
			t.Errorf("recovery codes beside a factor left: %d, want 10", n)
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})

		if err := s.RemoveFactor(ctx, a.ID, u.ID, key.ID, func(domain.User, domain.Factor, []domain.Factor, []domain.ProviderLink) ([]events.Event, error) {
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID); n != 0 {
			t.Errorf("recovery codes after the last factor: %d, want 0", n)
		}
	})

	t.Run("a refused factor removal changes nothing; a pending or unknown factor is not found", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u, totp, _ := confirmed(t, s, a, "ada@example.test")
		err := s.RemoveFactor(ctx, a.ID, u.ID, totp.ID, func(domain.User, domain.Factor, []domain.Factor, []domain.ProviderLink) ([]events.Event, error) {
			return []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("refused removal: %v, want fn's error", err)
		}
		if fs, _ := s.ListFactors(ctx, a.ID, u.ID); len(fs) != 1 {
			t.Errorf("factors after a refused removal: %d, want 1", len(fs))
		}
		if n, _ := s.CountRecoveryCodes(ctx, a.ID, u.ID); n != 10 {
			t.Errorf("recovery codes after a refused removal: %d, want 10", n)
		}
		wantEqual(t, "outbox of a refused removal", pendingIDs(t, outbox), []string{})
		pending := newFactor(a.ID, u.ID, t0)
		pending.Kind = domain.FactorPasskey
		if err := s.SavePendingFactor(ctx, pending); err != nil {
			t.Fatal(err)
		}
		never := func(domain.User, domain.Factor, []domain.Factor, []domain.ProviderLink) ([]events.Event, error) {
			t.Error("fn ran without a factor to remove")
			return nil, nil
		}
		wantNotFound(t, "pending factor", s.RemoveFactor(ctx, a.ID, u.ID, pending.ID, never))
		wantNotFound(t, "unknown factor", s.RemoveFactor(ctx, a.ID, u.ID, uuid.NewString(), never))
		wantNotFound(t, "unknown user", s.RemoveFactor(ctx, a.ID, uuid.NewString(), totp.ID, never))
	})
}
