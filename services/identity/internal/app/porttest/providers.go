package porttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func newProvider(appID, slot string, at time.Time) domain.IdentityProvider {
	return domain.IdentityProvider{
		AppID: appID, Slot: slot, DisplayName: "Provider " + slot, DiscoveryURL: "https://idp.example.test/.well-known/openid-configuration",
		ClientID: "client-" + slot, SealedSecret: []byte{9, 8, 7}, Scopes: []string{"openid", "email"},
		AllowedDomains: []string{"example.test"}, CreatedAt: at, UpdatedAt: at,
	}
}

func testIdentityProviders(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("a slot is stored, replaced keeping its creation time, listed in slot order and cleared", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		_, err := s.GetIdentityProvider(ctx, a.ID, "idpA")
		wantNotFound(t, "empty slot", err)
		c, b := newProvider(a.ID, "idpC", t0), newProvider(a.ID, "idpA", t0)
		b.SealedSecret, b.AllowedDomains = nil, nil // a public client, any domain
		for _, p := range []domain.IdentityProvider{c, b, newProvider(other.ID, "idpB", t0)} {
			if err := s.PutIdentityProvider(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.GetIdentityProvider(ctx, a.ID, "idpA")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "public client", got, b)
		list, err := s.ListIdentityProviders(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "listed slots", list, []domain.IdentityProvider{b, c})

		replaced := newProvider(a.ID, "idpC", t0.Add(time.Hour))
		replaced.DisplayName, replaced.DiscoveryURL = "Other", ""
		replaced.Issuer, replaced.AuthURL, replaced.TokenURL, replaced.JWKSURL = "https://o.test", "https://o.test/a", "https://o.test/t", "https://o.test/k"
		if err := s.PutIdentityProvider(ctx, replaced); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetIdentityProvider(ctx, a.ID, "idpC")
		if err != nil {
			t.Fatal(err)
		}
		replaced.CreatedAt = t0
		wantEqual(t, "replaced slot", got, replaced)

		if err := s.DeleteIdentityProvider(ctx, a.ID, "idpC"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteIdentityProvider(ctx, a.ID, "idpC"); err != nil {
			t.Errorf("clearing an empty slot: %v", err)
		}
		_, err = s.GetIdentityProvider(ctx, a.ID, "idpC")
		wantNotFound(t, "cleared slot", err)
		if _, err := s.GetIdentityProvider(ctx, other.ID, "idpB"); err != nil {
			t.Errorf("another app's slot: %v", err)
		}
	})

	t.Run("a slot needs an existing app", func(t *testing.T) {
		s, _ := newStore(t)
		wantNotFound(t, "unknown app", s.PutIdentityProvider(ctx, newProvider(uuid.NewString(), "idpA", t0)))
	})
}

func testProviderLinks(t *testing.T, newStore Factory) {
	ctx := context.Background()
	link := func(appID, slot, subject, userID string) domain.ProviderLink {
		return domain.ProviderLink{AppID: appID, Slot: slot, Subject: subject, UserID: userID, Email: "ada@example.test", CreatedAt: t0}
	}

	t.Run("a link is found by its provider identity and listed by its user, with its event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		ev := mustEvent(t, identityv1.EventUserProviderLinked, a.ID)
		b, c := link(a.ID, "idpB", "sub-1", u.ID), link(a.ID, "idpA", "sub-1", u.ID)
		if err := s.CreateProviderLink(ctx, b, ev); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateProviderLink(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetProviderLink(ctx, a.ID, "idpB", "sub-1")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetProviderLink", got, b)
		_, err = s.GetProviderLink(ctx, a.ID, "idpC", "sub-1")
		wantNotFound(t, "another slot's subject", err)
		list, err := s.ListProviderLinks(ctx, a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "ListProviderLinks", list, []domain.ProviderLink{c, b})
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("a provider identity links one user and a user one identity per slot", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ada@example.test"))
		v := seedUser(t, s, newUser(a.ID, "bob@example.test"))
		if err := s.CreateProviderLink(ctx, link(a.ID, "idpA", "sub-1", u.ID)); err != nil {
			t.Fatal(err)
		}
		ev := mustEvent(t, identityv1.EventUserProviderLinked, a.ID)
		if err := s.CreateProviderLink(ctx, link(a.ID, "idpA", "sub-1", v.ID), ev); !errors.Is(err, domain.ErrProviderLinked) {
			t.Errorf("the identity linked twice: %v, want ErrProviderLinked", err)
		}
		if err := s.CreateProviderLink(ctx, link(a.ID, "idpA", "sub-2", u.ID), ev); !errors.Is(err, domain.ErrProviderLinked) {
			t.Errorf("a second identity of the user's slot: %v, want ErrProviderLinked", err)
		}
		wantEqual(t, "outbox of refused links", pendingIDs(t, outbox), []string{})
		wantNotFound(t, "unknown user", s.CreateProviderLink(ctx, link(a.ID, "idpB", "sub-3", uuid.NewString())))
		b := seedApp(t, s)
		wantNotFound(t, "user of another app", s.CreateProviderLink(ctx, link(b.ID, "idpB", "sub-3", u.ID)))
	})

	t.Run("a linked user is created with its link, or neither is", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		seedUser(t, s, newUser(a.ID, "taken@example.test"))
		u := newUser(a.ID, "new@example.test")
		ev := mustEvent(t, identityv1.EventUserCreated, a.ID)
		l := link(a.ID, "idpA", "sub-9", u.ID)
		if err := s.CreateLinkedUser(ctx, u, l, ev); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetUser(ctx, a.ID, u.ID); err != nil {
			t.Errorf("created user: %v", err)
		}
		got, err := s.GetProviderLink(ctx, a.ID, "idpA", "sub-9")
		if err != nil || got.UserID != u.ID {
			t.Errorf("created link = %+v, %v", got, err)
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})

		taken := newUser(a.ID, "TAKEN@example.test")
		if err := s.CreateLinkedUser(ctx, taken, link(a.ID, "idpB", "sub-10", taken.ID)); !errors.Is(err, domain.ErrEmailTaken) {
			t.Errorf("taken address: %v, want ErrEmailTaken", err)
		}
		_, err = s.GetProviderLink(ctx, a.ID, "idpB", "sub-10")
		wantNotFound(t, "link of a refused user", err)
		again := newUser(a.ID, "again@example.test")
		if err := s.CreateLinkedUser(ctx, again, link(a.ID, "idpA", "sub-9", again.ID)); !errors.Is(err, domain.ErrProviderLinked) {
			t.Errorf("linked identity: %v, want ErrProviderLinked", err)
		}
		_, err = s.GetUser(ctx, a.ID, again.ID)
		wantNotFound(t, "user of a refused link", err)
	})
}
