package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// event builds an event as the producing service would, stamped at a chosen time.
func event(t *testing.T, eventType eventsv1.Type, appID string, at time.Time, payload proto.Message) events.Event {
	t.Helper()
	source, _, _ := strings.Cut(string(eventType), ".") // the producing context, as the type's first word
	ev, err := events.New(source, eventType, appID, payload)
	if err != nil {
		t.Fatal(err)
	}
	ev.Time = at
	return ev
}

func signedIn(t *testing.T, appID, userID, tenantRef string, at time.Time, name string) events.Event {
	return event(t, identityv1.EventUserSignedIn, appID, at, &identityv1.UserSignedIn{
		AppId: appID, UserId: userID, TenantRef: tenantRef, At: at.Format(time.RFC3339Nano), Ip: "203.0.113.9",
		User: &identityv1.TenantUser{Id: userID, AppId: appID, Name: name, NewsletterMemberId: "nl-" + name, TenantId: tenantRef != ""},
	})
}

func userChanged(t *testing.T, eventType eventsv1.Type, appID, userID, tenantRef string, at time.Time, name string) events.Event {
	return event(t, eventType, appID, at, &identityv1.UserChanged{
		AppId: appID, UserId: userID, TenantRef: tenantRef,
		User: &identityv1.TenantUser{Id: userID, AppId: appID, Name: name, Freezed: eventType == identityv1.EventUserFrozen},
	})
}

func tenantChanged(t *testing.T, eventType eventsv1.Type, appID, tenantID string, at time.Time, name string) events.Event {
	return event(t, eventType, appID, at, &tenantv1.TenantChanged{
		AppId: appID, TenantId: tenantID, Tenant: &tenantv1.Tenant{Kind: "tenant", Id: tenantID, Name: name},
	})
}

// service is the use cases as the server builds them from c.
func service(t *testing.T, c app.Config) *app.Service {
	t.Helper()
	svc, err := app.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func apply(t *testing.T, svc *app.Service, evs ...events.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := events.Handle(svc.Apply)(context.Background(), ev); err != nil {
			t.Fatalf("Apply %s: %v", ev.Type, err)
		}
	}
}

func listAll(t *testing.T, s app.Store, appID string) []app.SignInRecord {
	t.Helper()
	recs, err := s.ListSignIns(context.Background(), appID, t0.Add(-1000*time.Hour), t0.Add(1000*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestSignedInRecordsTheSignInAndRefreshesTheUser(t *testing.T) {
	store := memory.New()
	svc := service(t, app.Config{Store: store})
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := t0.Add(123456789 * time.Nanosecond)
	ev := signedIn(t, appID, userID, tenantID, at, "Ada")
	apply(t, svc, tenantChanged(t, tenantv1.EventTenantCreated, appID, tenantID, t0.Add(-time.Hour), "Acme"), ev)

	recs := listAll(t, store, appID)
	if len(recs) != 1 {
		t.Fatalf("listed %d sign-ins, want 1", len(recs))
	}
	got := recs[0]
	// The sign-in is kept to the microsecond, the precision both stores share.
	if got.SignIn.ID != ev.ID || !got.SignIn.At.Equal(at.Truncate(time.Microsecond)) || got.SignIn.IP != "203.0.113.9" ||
		got.SignIn.UserID != userID || got.SignIn.TenantRef != tenantID {
		t.Fatalf("sign-in %+v does not match event %s at %v", got.SignIn, ev.ID, at)
	}
	if got.User == nil || got.User.User.GetName() != "Ada" || got.User.TenantRef != tenantID || !got.User.AsOf.Equal(ev.Time.Truncate(time.Microsecond)) {
		t.Fatalf("user snapshot %+v, want Ada in tenant %s as of the event", got.User, tenantID)
	}
	if got.Tenant == nil || got.Tenant.Tenant.GetName() != "Acme" {
		t.Fatalf("tenant snapshot %+v, want Acme", got.Tenant)
	}
}

func TestSignedInWithoutAtUsesTheEventTime(t *testing.T) {
	store := memory.New()
	appID, userID := uuid.NewString(), uuid.NewString()
	apply(t, service(t, app.Config{Store: store}), event(t, identityv1.EventUserSignedIn, appID, t0, &identityv1.UserSignedIn{AppId: appID, UserId: userID}))
	recs := listAll(t, store, appID)
	if len(recs) != 1 || !recs[0].SignIn.At.Equal(t0) {
		t.Fatalf("listed %+v, want one sign-in at %v", recs, t0)
	}
	if recs[0].User != nil {
		t.Fatalf("a sign-in without user data made snapshot %+v", recs[0].User)
	}
}

func TestApplyingTheSameEventTwiceChangesNothing(t *testing.T) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	tests := []struct {
		name string
		ev   func(t *testing.T) events.Event
	}{
		{"signed in", func(t *testing.T) events.Event {
			return signedIn(t, appID, userID, tenantID, t0.Add(time.Hour), "again")
		}},
		{"updated", func(t *testing.T) events.Event {
			return userChanged(t, identityv1.EventUserUpdated, appID, userID, tenantID, t0.Add(time.Hour), "renamed")
		}},
		{"frozen", func(t *testing.T) events.Event {
			return userChanged(t, identityv1.EventUserFrozen, appID, userID, tenantID, t0.Add(time.Hour), "frozen")
		}},
		{"deleted", func(t *testing.T) events.Event {
			return event(t, identityv1.EventUserDeleted, appID, t0.Add(time.Hour), &identityv1.UserDeleted{AppId: appID, UserId: userID, TenantRef: tenantID})
		}},
		{"tenant updated", func(t *testing.T) events.Event {
			return tenantChanged(t, tenantv1.EventTenantUpdated, appID, tenantID, t0.Add(time.Hour), "Acme 2")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			svc := service(t, app.Config{Store: store})
			apply(t, svc, tenantChanged(t, tenantv1.EventTenantCreated, appID, tenantID, t0, "Acme"), signedIn(t, appID, userID, tenantID, t0, "Ada"))
			ev := tc.ev(t)
			apply(t, svc, ev)
			once := listAll(t, store, appID)
			apply(t, svc, ev)
			if twice := listAll(t, store, appID); !reflect.DeepEqual(once, twice) {
				t.Fatalf("applying %s again changed the projection:\nonce  %+v\ntwice %+v", ev.Type, once, twice)
			}
		})
	}
}

func TestOlderSnapshotDoesNotOverwriteANewerOne(t *testing.T) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	store := memory.New()
	svc := service(t, app.Config{Store: store})
	// Identity and tenant events travel on separate streams and redeliveries reorder them: the newer
	// state may arrive first.
	apply(t, svc,
		signedIn(t, appID, userID, tenantID, t0.Add(2*time.Hour), "newest"),
		userChanged(t, identityv1.EventUserUpdated, appID, userID, "", t0.Add(time.Hour), "older update"),
		signedIn(t, appID, userID, "", t0, "oldest sign-in"),
		tenantChanged(t, tenantv1.EventTenantUpdated, appID, tenantID, t0.Add(time.Hour), "newer tenant"),
		tenantChanged(t, tenantv1.EventTenantCreated, appID, tenantID, t0, "created"),
	)
	recs := listAll(t, store, appID)
	if len(recs) != 2 {
		t.Fatalf("listed %d sign-ins, want both", len(recs))
	}
	for _, rec := range recs {
		if rec.User.User.GetName() != "newest" || rec.User.TenantRef != tenantID {
			t.Fatalf("user snapshot went back to %q in tenant %q", rec.User.User.GetName(), rec.User.TenantRef)
		}
		if rec.Tenant == nil || rec.Tenant.Tenant.GetName() != "newer tenant" {
			t.Fatalf("tenant snapshot %+v, want the newer one", rec.Tenant)
		}
	}
}

func TestUserLifecycleEventsRefreshTheSnapshot(t *testing.T) {
	appID, userID := uuid.NewString(), uuid.NewString()
	store := memory.New()
	svc := service(t, app.Config{Store: store})
	apply(t, svc, signedIn(t, appID, userID, "", t0, "Ada"))
	steps := []struct {
		ev          events.Event
		wantName    string
		wantFrozen  bool
		wantDeleted bool
	}{
		{userChanged(t, identityv1.EventUserUpdated, appID, userID, "", t0.Add(1*time.Minute), "Ada L"), "Ada L", false, false},
		{userChanged(t, identityv1.EventUserFrozen, appID, userID, "", t0.Add(2*time.Minute), "Ada L"), "Ada L", true, false},
		{userChanged(t, identityv1.EventUserUnfrozen, appID, userID, "", t0.Add(3*time.Minute), "Ada L"), "Ada L", false, false},
		{event(t, identityv1.EventUserDeleted, appID, t0.Add(4*time.Minute), &identityv1.UserDeleted{AppId: appID, UserId: userID}), "Ada L", false, true},
	}
	for _, step := range steps {
		apply(t, svc, step.ev)
		u := listAll(t, store, appID)[0].User
		if u.User.GetName() != step.wantName || u.User.GetFreezed() != step.wantFrozen || u.Deleted != step.wantDeleted {
			t.Fatalf("after %s: name %q frozen %v deleted %v, want %q %v %v", step.ev.Type,
				u.User.GetName(), u.User.GetFreezed(), u.Deleted, step.wantName, step.wantFrozen, step.wantDeleted)
		}
	}
}

func TestMalformedEventsAreRefusedAndChangeNothing(t *testing.T) {
	appID, userID := uuid.NewString(), uuid.NewString()
	tests := []struct {
		name string
		ev   func(t *testing.T) events.Event
	}{
		{"user id not a UUID", func(t *testing.T) events.Event {
			return event(t, identityv1.EventUserSignedIn, appID, t0, &identityv1.UserSignedIn{AppId: appID, UserId: "bob"})
		}},
		{"no app id anywhere", func(t *testing.T) events.Event {
			return event(t, identityv1.EventUserSignedIn, "", t0, &identityv1.UserSignedIn{UserId: userID})
		}},
		{"tenant ref not a UUID", func(t *testing.T) events.Event {
			return event(t, identityv1.EventUserSignedIn, appID, t0, &identityv1.UserSignedIn{AppId: appID, UserId: userID, TenantRef: "t-1"})
		}},
		{"at not RFC 3339", func(t *testing.T) events.Event {
			return event(t, identityv1.EventUserSignedIn, appID, t0, &identityv1.UserSignedIn{AppId: appID, UserId: userID, At: "04.03.2026"})
		}},
		{"update without user", func(t *testing.T) events.Event {
			return event(t, identityv1.EventUserUpdated, appID, t0, &identityv1.UserChanged{AppId: appID, UserId: userID})
		}},
		{"tenant change without tenant", func(t *testing.T) events.Event {
			return event(t, tenantv1.EventTenantUpdated, appID, t0, &tenantv1.TenantChanged{AppId: appID, TenantId: uuid.NewString()})
		}},
		{"payload that is not the message", func(t *testing.T) events.Event {
			ev := event(t, identityv1.EventUserSignedIn, appID, t0, &identityv1.UserSignedIn{})
			ev.Data = json.RawMessage(`{"appId": 7}`)
			return ev
		}},
		{"type analytics does not apply", func(t *testing.T) events.Event {
			return event(t, identityv1.EventAppChanged, appID, t0, &identityv1.AppChanged{AppId: appID})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			err := events.Handle(service(t, app.Config{Store: store}).Apply)(context.Background(), tc.ev(t))
			if !errors.Is(err, app.ErrMalformed) {
				t.Fatalf("Apply = %v, want ErrMalformed", err)
			}
			if recs := listAll(t, store, appID); len(recs) != 0 {
				t.Fatalf("a refused event stored %+v", recs)
			}
		})
	}
}

func TestAUserThatNeverSignedInIsListedWithItsTenantOnceCreated(t *testing.T) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	store := memory.New()
	svc := service(t, app.Config{Store: store})
	apply(t, svc, tenantChanged(t, tenantv1.EventTenantCreated, appID, tenantID, t0, "Acme"),
		userChanged(t, identityv1.EventUserCreated, appID, userID, tenantID, t0, "Provisioned"))
	var got []app.TenantRecord
	day := t0.UTC().Truncate(24 * time.Hour)
	err := store.VisitTenants(context.Background(), appID, day, day.Add(24*time.Hour), app.Visitor[app.TenantRecord]{
		Count: func(int) error { return nil },
		Each:  func(rec app.TenantRecord) error { got = append(got, rec); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Users) != 1 || got[0].Users[0].UserID != userID || got[0].Users[0].User.GetName() != "Provisioned" {
		t.Fatalf("tenants = %+v, want Acme with its provisioned user", got)
	}
}
