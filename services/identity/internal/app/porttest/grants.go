package porttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// concurrently runs fn n times at once and returns how many calls succeeded.
func concurrently(n int, fn func() error) (ok int, errs []error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			err := fn()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			} else {
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return ok, errs
}

func testDeleteUser(t *testing.T, newStore Factory) {
	ctx := context.Background()
	inTenant := func(appID, email, tenant string) domain.User {
		u := newUser(appID, email)
		u.TenantID = tenant
		return u
	}
	keep := func(evs ...events.Event) func(domain.User, int) ([]events.Event, error) {
		return func(domain.User, int) ([]events.Event, error) { return evs, nil }
	}

	t.Run("marks the user deleted, counts the tenant's other live users and writes the events", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		tenant := uuid.NewString()
		u := seedUser(t, s, inTenant(a.ID, "u@example.test", tenant))
		seedUser(t, s, inTenant(a.ID, "other@example.test", tenant))
		gone := inTenant(a.ID, "gone@example.test", tenant)
		gone.Deleted = true
		seedUser(t, s, gone)
		seedUser(t, s, inTenant(a.ID, "elsewhere@example.test", uuid.NewString()))
		ev := mustEvent(t, identityv1.EventUserUpdated, a.ID)
		later := t0.Add(time.Hour)
		var seen int
		deleted, err := s.DeleteUser(ctx, a.ID, u.ID, later, func(d domain.User, left int) ([]events.Event, error) {
			seen = left
			if !d.Deleted {
				t.Error("fn got a user not yet marked deleted")
			}
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := u
		want.Deleted, want.UpdatedAt = true, later
		wantEqual(t, "DeleteUser result", deleted, want)
		got, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user after delete", got, want)
		wantEqual(t, "tenant users left", seen, 1)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})

		_, err = s.DeleteUser(ctx, a.ID, u.ID, later, keep())
		wantNotFound(t, "second delete", err)
	})

	t.Run("a user without a tenant leaves zero", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "solo@example.test"))
		left := -1
		if _, err := s.DeleteUser(ctx, a.ID, u.ID, t0, func(_ domain.User, n int) ([]events.Event, error) { left = n; return nil, nil }); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "left", left, 0)
	})

	t.Run("a failing fn deletes nothing", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		_, err := s.DeleteUser(ctx, a.ID, u.ID, t0, func(domain.User, int) ([]events.Event, error) {
			return []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("error = %v, want fn's error", err)
		}
		got, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user after failed delete", got, u)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("only users of the app can be deleted", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		_, err := s.DeleteUser(ctx, other.ID, u.ID, t0, keep())
		wantNotFound(t, "delete from another app", err)
		_, err = s.DeleteUser(ctx, a.ID, "x", t0, keep())
		wantNotFound(t, "malformed id", err)
	})

	t.Run("concurrent deletions of a tenant's last users count each other", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		tenant := uuid.NewString()
		users := []domain.User{
			seedUser(t, s, inTenant(a.ID, "one@example.test", tenant)),
			seedUser(t, s, inTenant(a.ID, "two@example.test", tenant)),
			seedUser(t, s, inTenant(a.ID, "three@example.test", tenant)),
		}
		var (
			mu    sync.Mutex
			lefts []int
			next  int
		)
		ok, errs := concurrently(len(users), func() error {
			mu.Lock()
			u := users[next]
			next++
			mu.Unlock()
			_, err := s.DeleteUser(ctx, a.ID, u.ID, t0, func(_ domain.User, left int) ([]events.Event, error) {
				mu.Lock()
				lefts = append(lefts, left)
				mu.Unlock()
				return nil, nil
			})
			return err
		})
		if ok != len(users) {
			t.Fatalf("%d of %d deletions succeeded: %v", ok, len(users), errs)
		}
		// Each deletion saw the ones before it: the counts are 2, 1, 0 in some order, so exactly one
		// deletion saw the tenant emptied.
		slices.Sort(lefts)
		wantEqual(t, "counts seen", lefts, []int{0, 1, 2})
	})

	t.Run("a deleted user's email can be used again and lookups prefer the live user", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		old := seedUser(t, s, newUser(a.ID, "reuse@example.test"))
		if _, err := s.DeleteUser(ctx, a.ID, old.ID, t0.Add(time.Hour), keep()); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetUserByEmail(ctx, a.ID, "reuse@example.test")
		if err != nil || got.ID != old.ID || !got.Deleted {
			t.Errorf("lookup with only the deleted user: %v, %v", got.ID, err)
		}
		fresh := seedUser(t, s, newUser(a.ID, "REUSE@example.test"))
		got, err = s.GetUserByEmail(ctx, a.ID, "reuse@example.test")
		if err != nil || got.ID != fresh.ID {
			t.Errorf("lookup = %v, %v; want the live user %s", got.ID, err, fresh.ID)
		}
		if err := s.CreateUser(ctx, newUser(a.ID, "reuse@example.test")); !errors.Is(err, domain.ErrEmailTaken) {
			t.Errorf("second live user with the address: %v, want ErrEmailTaken", err)
		}
	})
}

func newCode(appID, userID string, created time.Time) (domain.AuthCode, string) {
	secret, hash, err := domain.NewSecret()
	if err != nil {
		panic(err)
	}
	return domain.AuthCode{
		Hash: hash, AppID: appID, UserID: userID, RedirectURI: "https://example.test/cb", Nonce: "nonce-1",
		Scope: "openid email", AuthTime: created.Add(-time.Second), CreatedAt: created, ExpiresAt: created.Add(domain.AuthCodeTTL),
		ClientIP: "2001:db8::7", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0 «ü»",
		AMR: []string{domain.AMRPassword, domain.AMROTP, domain.AMRMulti},
	}, secret
}

func testAuthCodes(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("a code is consumed once with every field", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		c, secret := newCode(a.ID, u.ID, t0)
		if err := s.CreateAuthCode(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.ConsumeAuthCode(ctx, domain.HashSecret(secret))
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "ConsumeAuthCode", got, c)
		_, err = s.ConsumeAuthCode(ctx, c.Hash)
		wantNotFound(t, "second consume", err)
		_, err = s.ConsumeAuthCode(ctx, domain.HashSecret("unknown"))
		wantNotFound(t, "unknown code", err)
	})

	t.Run("concurrent consumers: exactly one gets the code", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		c, _ := newCode(a.ID, u.ID, t0)
		if err := s.CreateAuthCode(ctx, c); err != nil {
			t.Fatal(err)
		}
		ok, errs := concurrently(8, func() error { _, err := s.ConsumeAuthCode(ctx, c.Hash); return err })
		if ok != 1 {
			t.Fatalf("%d consumers got the code, want 1", ok)
		}
		for _, err := range errs {
			wantNotFound(t, "losing consumer", err)
		}
	})

	t.Run("codes need a user of the app", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		c, _ := newCode(other.ID, u.ID, t0)
		wantNotFound(t, "user of another app", s.CreateAuthCode(ctx, c))
		c, _ = newCode(a.ID, uuid.NewString(), t0)
		wantNotFound(t, "unknown user", s.CreateAuthCode(ctx, c))
	})

	t.Run("creating a code forgets expired ones", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		old, _ := newCode(a.ID, u.ID, t0)
		live, _ := newCode(a.ID, u.ID, t0.Add(30*time.Second))
		for _, c := range []domain.AuthCode{old, live} {
			if err := s.CreateAuthCode(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		later, _ := newCode(a.ID, u.ID, t0.Add(domain.AuthCodeTTL+time.Second))
		if err := s.CreateAuthCode(ctx, later); err != nil {
			t.Fatal(err)
		}
		_, err := s.ConsumeAuthCode(ctx, old.Hash)
		wantNotFound(t, "expired code after a newer one was created", err)
		if _, err := s.ConsumeAuthCode(ctx, live.Hash); err != nil {
			t.Errorf("a code still valid was forgotten: %v", err)
		}
	})
}

// newFamily is a family started at t0 whose first token lives an hour.
func newFamily(appID, userID string) domain.RefreshFamily {
	return domain.RefreshFamily{ID: uuid.NewString(), AppID: appID, UserID: userID, RedirectURI: "https://example.test/cb",
		Scope: "openid", AuthTime: t0.Add(-time.Minute), CreatedAt: t0, LastUsedAt: t0, ExpiresAt: t0.Add(time.Hour),
		ClientIP: "192.0.2.10", UserAgent: "Mozilla/5.0 (Macintosh) Safari/605.1.15", AMR: []string{domain.AMRPassword}}
}

func newRefresh(created time.Time, ttl time.Duration) domain.RefreshToken {
	_, hash, err := domain.NewSecret()
	if err != nil {
		panic(err)
	}
	return domain.RefreshToken{Hash: hash, CreatedAt: created, ExpiresAt: created.Add(ttl)}
}

func testRefreshTokens(t *testing.T, newStore Factory) {
	ctx := context.Background()
	seedFamily := func(t *testing.T, s app.Store, appID, userID string) (domain.RefreshFamily, domain.RefreshToken) {
		t.Helper()
		f, first := newFamily(appID, userID), newRefresh(t0, time.Hour)
		if err := s.CreateRefreshFamily(ctx, f, first); err != nil {
			t.Fatal(err)
		}
		first.FamilyID = f.ID
		return f, first
	}
	revoked := func(t *testing.T, s app.Store, hash []byte) bool {
		t.Helper()
		_, f, err := s.GetRefreshToken(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		return f.Revoked
	}

	t.Run("a family round trips with its first token", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		f, first := seedFamily(t, s, a.ID, u.ID)
		tok, fam, err := s.GetRefreshToken(ctx, first.Hash)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "token", tok, first)
		wantEqual(t, "family", fam, f)
		_, _, err = s.GetRefreshToken(ctx, domain.HashSecret("nope"))
		wantNotFound(t, "unknown token", err)
		other := seedApp(t, s)
		wantNotFound(t, "family for a user of another app", s.CreateRefreshFamily(ctx, newFamily(other.ID, u.ID), newRefresh(t0, time.Hour)))
	})

	t.Run("rotation marks the token used and continues the family", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		f, first := seedFamily(t, s, a.ID, u.ID)
		next := newRefresh(t0.Add(time.Minute), time.Hour)
		if err := s.RotateRefreshToken(ctx, first.Hash, next); err != nil {
			t.Fatal(err)
		}
		old, _, _ := s.GetRefreshToken(ctx, first.Hash)
		if old.UsedAt == nil || !old.UsedAt.Equal(next.CreatedAt) {
			t.Errorf("rotated token UsedAt = %v, want %v", old.UsedAt, next.CreatedAt)
		}
		got, fam, err := s.GetRefreshToken(ctx, next.Hash)
		if err != nil || got.FamilyID != f.ID || fam.Revoked || got.UsedAt != nil {
			t.Fatalf("next token = %+v in %+v, %v", got, fam, err)
		}
		f.LastUsedAt, f.ExpiresAt = next.CreatedAt, next.ExpiresAt
		wantEqual(t, "family after the rotation (last used and expiry moved)", fam, f)
	})

	t.Run("a used token or a revoked family is spent and changes nothing", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		f, first := seedFamily(t, s, a.ID, u.ID)
		next := newRefresh(t0.Add(time.Minute), time.Hour)
		if err := s.RotateRefreshToken(ctx, first.Hash, next); err != nil {
			t.Fatal(err)
		}
		again := newRefresh(t0.Add(2*time.Minute), time.Hour)
		if err := s.RotateRefreshToken(ctx, first.Hash, again); !errors.Is(err, domain.ErrTokenSpent) {
			t.Fatalf("reuse: error = %v, want ErrTokenSpent", err)
		}
		_, _, err := s.GetRefreshToken(ctx, again.Hash)
		wantNotFound(t, "the token a spent rotation offered", err)
		if revoked(t, s, next.Hash) {
			t.Error("the store revoked the family itself; revoking it as stolen is the caller's")
		}
		if _, err := s.RevokeSessions(ctx, a.ID, u.ID, f.ID, t0.Add(2*time.Minute), noEvents); err != nil {
			t.Fatal(err)
		}
		if err := s.RotateRefreshToken(ctx, next.Hash, newRefresh(t0.Add(3*time.Minute), time.Hour)); !errors.Is(err, domain.ErrTokenSpent) {
			t.Errorf("rotation in a revoked family: error = %v, want ErrTokenSpent", err)
		}
		if tok, _, _ := s.GetRefreshToken(ctx, next.Hash); tok.UsedAt != nil {
			t.Errorf("a rotation refused in a revoked family marked the token used at %v", tok.UsedAt)
		}
		err = s.RotateRefreshToken(ctx, domain.HashSecret("nope"), newRefresh(t0, time.Hour))
		wantNotFound(t, "rotate unknown token", err)
	})

	t.Run("concurrent rotations of one token: exactly one succeeds", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		_, first := seedFamily(t, s, a.ID, u.ID)
		ok, errs := concurrently(6, func() error {
			return s.RotateRefreshToken(ctx, first.Hash, newRefresh(t0.Add(time.Minute), time.Hour))
		})
		if ok != 1 {
			t.Fatalf("%d rotations succeeded, want 1 (%v)", ok, errs)
		}
		for _, err := range errs {
			if !errors.Is(err, domain.ErrTokenSpent) {
				t.Errorf("losing rotation: %v, want ErrTokenSpent", err)
			}
		}
	})

	t.Run("rotation forgets the family's expired tokens", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		_, first := seedFamily(t, s, a.ID, u.ID)
		second := newRefresh(t0.Add(time.Minute), time.Minute)
		if err := s.RotateRefreshToken(ctx, first.Hash, second); err != nil {
			t.Fatal(err)
		}
		if err := s.RotateRefreshToken(ctx, second.Hash, newRefresh(t0.Add(2*time.Hour), time.Hour)); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.GetRefreshToken(ctx, first.Hash)
		wantNotFound(t, "expired token of the family", err)
	})

	t.Run("revocation by session, user and app", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u1 := seedUser(t, s, newUser(a.ID, "one@example.test"))
		u2 := seedUser(t, s, newUser(a.ID, "two@example.test"))
		u3 := seedUser(t, s, newUser(other.ID, "three@example.test"))
		f1, t1 := seedFamily(t, s, a.ID, u1.ID)
		_, t1b := seedFamily(t, s, a.ID, u1.ID)
		_, t2 := seedFamily(t, s, a.ID, u2.ID)
		_, t3 := seedFamily(t, s, other.ID, u3.ID)
		state := func() []bool {
			return []bool{revoked(t, s, t1.Hash), revoked(t, s, t1b.Hash), revoked(t, s, t2.Hash), revoked(t, s, t3.Hash)}
		}
		if _, err := s.RevokeSessions(ctx, a.ID, u1.ID, f1.ID, t0, noEvents); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "after revoking one family", state(), []bool{true, false, false, false})
		if _, err := s.RevokeSessions(ctx, a.ID, u1.ID, "", t0, noEvents); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "after revoking user one", state(), []bool{true, true, false, false})
		rotate := func(*domain.App) ([]events.Event, error) { return nil, nil }
		if _, err := s.RotateAppKey(ctx, a.ID, t0, rotate, func(string, []string) ([]events.Event, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "after rotating the app's key", state(), []bool{true, true, true, false})
	})

	t.Run("a key rotation commits the app, the revocation and one event per user with live sessions together", func(t *testing.T) {
		s, outbox := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u1 := seedUser(t, s, newUser(a.ID, "one@example.test"))
		u2 := seedUser(t, s, newUser(a.ID, "two@example.test"))
		idle := seedUser(t, s, newUser(a.ID, "idle@example.test"))
		u3 := seedUser(t, s, newUser(other.ID, "three@example.test"))
		f1, t1 := seedFamily(t, s, a.ID, u1.ID)
		f1b, t1b := seedFamily(t, s, a.ID, u1.ID)
		f2, t2 := seedFamily(t, s, a.ID, u2.ID)
		_, tIdle := seedFamily(t, s, a.ID, idle.ID) // expired by the rotation: revoked, but no event
		_, t3 := seedFamily(t, s, other.ID, u3.ID)
		appEv := mustEvent(t, identityv1.EventAppChanged, a.ID)
		at := t0.Add(2 * time.Hour)
		// A refresh keeps these three live past the idle family's first hour.
		for _, tok := range []domain.RefreshToken{t1, t1b, t2} {
			next := newRefresh(t0.Add(30*time.Minute), 3*time.Hour)
			if err := s.RotateRefreshToken(ctx, tok.Hash, next); err != nil {
				t.Fatal(err)
			}
		}
		byUser := map[string]events.Event{
			u1.ID: mustEvent(t, identityv1.EventSessionsRevoked, a.ID),
			u2.ID: mustEvent(t, identityv1.EventSessionsRevoked, a.ID),
		}
		got := map[string][]string{}
		var order []string
		rotated, err := s.RotateAppKey(ctx, a.ID, at, func(x *domain.App) ([]events.Event, error) {
			x.PublicKeyPEM, x.UpdatedAt = "rotated", at
			return []events.Event{appEv}, nil
		}, func(userID string, revoked []string) ([]events.Event, error) {
			got[userID], order = revoked, append(order, userID)
			return []events.Event{byUser[userID]}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := a
		want.PublicKeyPEM, want.UpdatedAt = "rotated", at
		wantEqual(t, "RotateAppKey result", rotated, want)
		stored, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "app after rotation", stored, want)
		wantEqual(t, "sessions per user", got, map[string][]string{u1.ID: sorted(f1.ID, f1b.ID), u2.ID: {f2.ID}})
		wantEqual(t, "users in id order", order, sorted(u1.ID, u2.ID))
		wantIDs := []string{appEv.ID}
		for _, userID := range order {
			wantIDs = append(wantIDs, byUser[userID].ID)
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), wantIDs)
		wantEqual(t, "revoked", []bool{revoked(t, s, t1.Hash), revoked(t, s, t1b.Hash), revoked(t, s, t2.Hash), revoked(t, s, tIdle.Hash), revoked(t, s, t3.Hash)},
			[]bool{true, true, true, true, false})
	})

	t.Run("a failing key rotation writes nothing", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "one@example.test"))
		_, tok := seedFamily(t, s, a.ID, u.ID)
		change := func(x *domain.App) ([]events.Event, error) {
			x.PublicKeyPEM = "rotated"
			return []events.Event{mustEvent(t, identityv1.EventAppChanged, a.ID)}, nil
		}
		sessionEvents := func(string, []string) ([]events.Event, error) {
			return []events.Event{mustEvent(t, identityv1.EventSessionsRevoked, a.ID)}, nil
		}
		failing := func(*domain.App) ([]events.Event, error) { return nil, errBoom }
		if _, err := s.RotateAppKey(ctx, a.ID, t0, failing, sessionEvents); !errors.Is(err, errBoom) {
			t.Errorf("failing fn: error = %v, want it", err)
		}
		if _, err := s.RotateAppKey(ctx, a.ID, t0, change, func(string, []string) ([]events.Event, error) { return nil, errBoom }); !errors.Is(err, errBoom) {
			t.Errorf("failing sessionsRevoked: error = %v, want it", err)
		}
		_, err := s.RotateAppKey(ctx, uuid.NewString(), t0, change, sessionEvents)
		wantNotFound(t, "unknown app", err)
		stored, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "app", stored, a)
		if revoked(t, s, tok.Hash) {
			t.Error("a failed rotation revoked the session")
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})
}

// sorted returns ids in ascending order.
func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

func testAttempts(t *testing.T, newStore Factory) {
	ctx := context.Background()
	limit := func(key string, maxAttempts int, since time.Time) app.AttemptLimit {
		return app.AttemptLimit{Key: key, Max: maxAttempts, Since: since}
	}
	reserve := func(s app.Store, at time.Time, limits ...app.AttemptLimit) (string, int) {
		t.Helper()
		id := uuid.NewString()
		reached, err := s.ReserveAttempt(ctx, id, at, limits...)
		if err != nil {
			t.Fatal(err)
		}
		return id, reached
	}

	t.Run("the first limit reached refuses and records nothing", func(t *testing.T) {
		s, _ := newStore(t)
		for i := range 3 {
			if _, reached := reserve(s, t0, limit("pair:a", 3, t0), limit("email:a", 5, t0)); reached != -1 {
				t.Fatalf("reservation %d refused by limit %d", i, reached)
			}
		}
		_, reached := reserve(s, t0, limit("email:a", 5, t0), limit("pair:a", 3, t0))
		wantEqual(t, "index of the limit reached", reached, 1)
		// The refused reservation was not recorded under email:a: two more fit there.
		for i := range 2 {
			if _, reached := reserve(s, t0, limit("email:a", 5, t0)); reached != -1 {
				t.Fatalf("email reservation %d refused", i)
			}
		}
		_, reached = reserve(s, t0, limit("email:a", 5, t0))
		wantEqual(t, "email limit", reached, 0)
	})

	t.Run("attempts before since do not count", func(t *testing.T) {
		s, _ := newStore(t)
		reserve(s, t0, limit("k", 1, t0))
		_, reached := reserve(s, t0.Add(time.Minute), limit("k", 1, t0))
		wantEqual(t, "within the window", reached, 0)
		_, reached = reserve(s, t0.Add(time.Minute), limit("k", 1, t0.Add(time.Second)))
		wantEqual(t, "after the window", reached, -1)
	})

	t.Run("check-only limits refuse without recording", func(t *testing.T) {
		s, _ := newStore(t)
		check := app.AttemptLimit{Key: "ip:1", Max: 1, Since: t0, CheckOnly: true}
		for range 3 {
			if _, reached := reserve(s, t0, limit("signup:1", 10, t0), check); reached != -1 {
				t.Fatal("a check-only limit counted the attempts")
			}
		}
		reserve(s, t0, limit("ip:1", 5, t0))
		_, reached := reserve(s, t0, limit("signup:1", 10, t0), check)
		wantEqual(t, "check-only limit reached", reached, 1)
	})

	t.Run("release forgets one attempt under every key, clear one key", func(t *testing.T) {
		s, _ := newStore(t)
		first, _ := reserve(s, t0, limit("a", 2, t0), limit("b", 2, t0))
		reserve(s, t0, limit("a", 2, t0), limit("b", 2, t0))
		if err := s.ReleaseAttempt(ctx, first); err != nil {
			t.Fatal(err)
		}
		if err := s.ReleaseAttempt(ctx, uuid.NewString()); err != nil {
			t.Fatalf("release of an unknown attempt: %v", err)
		}
		_, reached := reserve(s, t0, limit("a", 2, t0), limit("b", 2, t0))
		wantEqual(t, "after release", reached, -1)
		_, reached = reserve(s, t0, limit("b", 2, t0))
		wantEqual(t, "b full again", reached, 0)
		if err := s.ClearAttempts(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		_, reached = reserve(s, t0, limit("b", 2, t0))
		wantEqual(t, "b after clearing", reached, -1)
		_, reached = reserve(s, t0, limit("a", 2, t0))
		wantEqual(t, "a untouched by clearing b", reached, 0)
	})

	// The reason the port exists: 24 concurrent reservations against a limit of 10 (and an
	// overlapping one of 15) let exactly 10 through, and the loser count is exact too.
	t.Run("concurrent reservations never pass a limit", func(t *testing.T) {
		s, _ := newStore(t)
		const parallel, allowed = 24, 10
		var (
			wg             sync.WaitGroup
			passed, failed atomic.Int32
			start          = make(chan struct{})
		)
		for i := range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				limits := []app.AttemptLimit{limit("pair:x", allowed, t0), limit("email:x", 15, t0), limit(fmt.Sprintf("ip:%d", i%3), 30, t0)}
				reached, err := s.ReserveAttempt(ctx, uuid.NewString(), t0, limits...)
				switch {
				case err != nil:
					t.Error(err)
				case reached == -1:
					passed.Add(1)
				default:
					failed.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		wantEqual(t, "reservations passed", int(passed.Load()), allowed)
		wantEqual(t, "reservations refused", int(failed.Load()), parallel-allowed)
	})
}
