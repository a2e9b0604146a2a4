package porttest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Factory returns an empty store and the outbox its changes write their events to.
type Factory func(t *testing.T) (app.Store, events.OutboxSource)

// Exempt declares a case the adapter under test cannot honour, and why.
type Exempt = conformance.Exempt

// Run runs every port's suite against stores made by newStore, skipping the cases exempt names.
func Run(t *testing.T, newStore Factory, exempt ...Exempt) {
	s := conformance.New(t, exempt)
	s.Run("Projects", func(t *testing.T) { testProjects(t, newStore) })
	s.Run("Apps", func(t *testing.T) { testApps(t, newStore) })
	s.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, newStore) })
	s.Run("UpdateAPIKey", func(t *testing.T) { testUpdateAPIKey(t, newStore) })
	s.Run("ProjectMembers", func(t *testing.T) { testProjectMembers(t, newStore) })
	s.Run("OperatorKeys", func(t *testing.T) { testOperatorKeys(t, newStore) })
	s.Run("Users", func(t *testing.T) { testUsers(t, newStore) })
	s.Run("SearchUsers", func(t *testing.T) { testSearchUsers(t, newStore) })
	s.Run("Roles", func(t *testing.T) { testRoles(t, newStore) })
	s.Run("DeleteUser", func(t *testing.T) { testDeleteUser(t, newStore) })
	s.Run("AuthCodes", func(t *testing.T) { testAuthCodes(t, newStore) })
	s.Run("RefreshTokens", func(t *testing.T) { testRefreshTokens(t, newStore) })
	s.Run("Sessions", func(t *testing.T) { testSessions(t, newStore) })
	s.Run("Attempts", func(t *testing.T) { testAttempts(t, newStore) })
	s.Run("Referrals", func(t *testing.T) { testReferrals(t, newStore) })
	s.Run("Challenges", func(t *testing.T) { testChallenges(t, newStore) })
	s.Run("IdentityProviders", func(t *testing.T) { testIdentityProviders(t, newStore) })
	s.Run("ProviderLinks", func(t *testing.T) { testProviderLinks(t, newStore) })
	s.Run("Factors", func(t *testing.T) { testFactors(t, newStore) })
	s.Run("MemberAccounts", func(t *testing.T) { testMemberAccounts(t, newStore) })
	s.Run("MemberSessions", func(t *testing.T) { testMemberSessions(t, newStore) })
	s.Run("MemberFactors", func(t *testing.T) { testMemberFactors(t, newStore) })
	s.Run("MemberPasskeys", func(t *testing.T) { testMemberPasskeys(t, newStore) })
	s.Run("ProjectApps", func(t *testing.T) { testProjectApps(t, newStore) })
	s.Run("EventsCarryTheTraceOfTheirChange", func(t *testing.T) { testEventsCarryTrace(t, newStore) })
	s.Run("AccountSignInMethods", func(t *testing.T) { testAccountSignInMethods(t, newStore) })
}

// t0 is a fixed instant at microsecond precision (what PostgreSQL keeps).
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)

var errBoom = errors.New("boom")

func seedProject(t *testing.T, s app.Store) domain.Project {
	t.Helper()
	p := domain.Project{ID: uuid.NewString(), Name: "project", CreatedAt: t0}
	if err := s.CreateProject(context.Background(), p); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	return p
}

func newApp(projectID string) domain.App {
	return domain.App{
		ID: uuid.NewString(), ProjectID: projectID, Name: "app", Enabled: true,
		RedirectURIs:     []string{"https://example.test/cb", "http://localhost:3000/cb"},
		ExtraOrigins:     []string{"https://www.example.test"},
		PublicKeyPEM:     "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		SealedPrivateKey: []byte{1, 2, 3, 4}, AccessTokenTTL: 5 * time.Minute, RefreshTokenTTL: 7 * 24 * time.Hour,
		EmailVerification: domain.VerificationRequired, MFA: domain.MFAOptional,
		CreatedAt: t0, UpdatedAt: t0,
	}
}

func seedApp(t *testing.T, s app.Store) domain.App {
	t.Helper()
	a := newApp(seedProject(t, s).ID)
	if err := s.CreateApp(context.Background(), a); err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	return a
}

func newUser(appID, email string) domain.User {
	return domain.User{ID: uuid.NewString(), AppID: appID, Email: email, CreatedAt: t0, UpdatedAt: t0}
}

func seedUser(t *testing.T, s app.Store, u domain.User) domain.User {
	t.Helper()
	if err := s.CreateUser(context.Background(), u); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	return u
}

// mustEvent builds an event of eventType with its declared payload; the payload's content is of no
// concern to a store.
func mustEvent(t *testing.T, eventType eventsv1.Type, appID string) events.Event {
	t.Helper()
	var payload proto.Message
	switch eventType {
	case identityv1.EventAppChanged:
		payload = &identityv1.AppChanged{AppId: appID}
	case identityv1.EventAPIKeyChanged:
		payload = &identityv1.ApiKeyChanged{AppId: appID}
	case identityv1.EventUserCreated, identityv1.EventUserUpdated:
		payload = &identityv1.UserChanged{AppId: appID}
	case identityv1.EventSessionsRevoked:
		payload = &identityv1.SessionsRevoked{AppId: appID}
	case identityv1.EventUserProviderLinked:
		payload = &identityv1.ProviderLinked{AppId: appID}
	case identityv1.EventUserPasswordChanged:
		payload = &identityv1.UserPasswordChanged{AppId: appID}
	case identityv1.EventMemberSessionEnded:
		payload = &identityv1.MemberSessionEnded{}
	default:
		t.Fatalf("mustEvent knows no payload for %s", eventType)
	}
	ev, err := events.New(app.Source, eventType, appID, payload)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// pendingIDs lists the ids of the outbox's unpublished events.
// testEventsCarryTrace makes each kind of change that writes events in a trace of its own; every
// event must carry the trace of the change that wrote it.
func testEventsCarryTrace(t *testing.T, newStore Factory) {
	s, outbox := newStore(t)
	a := seedApp(t, s)
	want := map[string]string{}
	traced := func(eventType eventsv1.Type) (context.Context, events.Event) {
		ctx, traceparent := conformance.Traced(context.Background())
		ev := mustEvent(t, eventType, a.ID)
		want[ev.ID] = traceparent
		return ctx, ev
	}
	u := newUser(a.ID, "traced@example.test")
	ctx, ev := traced(identityv1.EventUserCreated)
	if err := s.CreateUser(ctx, u, ev); err != nil {
		t.Fatal(err)
	}
	ctx, ev = traced(identityv1.EventUserUpdated)
	if _, err := s.UpdateUser(ctx, a.ID, u.ID, func(x *domain.User) ([]events.Event, error) {
		x.Name = "Traced"
		return []events.Event{ev}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, ev = traced(identityv1.EventAppChanged)
	if _, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
		x.Name = "traced"
		return []events.Event{ev}, nil
	}); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "pending events' traceparents", conformance.Traceparents(t, outbox), want)
}

func pendingIDs(t *testing.T, o events.OutboxSource) []string {
	t.Helper()
	evs, err := o.Pending(context.Background(), 1000)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	ids := []string{}
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	return ids
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("%s: error = %v, want not found", what, err)
	}
}

func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func testProjects(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, _ := newStore(t)
	p := seedProject(t, s)
	got, err := s.GetProject(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "GetProject", got, p)
	_, err = s.GetProject(ctx, uuid.NewString())
	wantNotFound(t, "unknown project", err)
	_, err = s.GetProject(ctx, "not-a-uuid")
	wantNotFound(t, "malformed project id", err)
}

func testApps(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("create and get round trip every field", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		got, err := s.GetApp(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetApp", got, a)
		_, err = s.GetApp(ctx, uuid.NewString())
		wantNotFound(t, "unknown app", err)
		_, err = s.GetApp(ctx, "x")
		wantNotFound(t, "malformed app id", err)
	})

	t.Run("list holds every app, ordered by id", func(t *testing.T) {
		s, _ := newStore(t)
		a, b := seedApp(t, s), seedApp(t, s)
		got, err := s.ListApps(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var listed []domain.App
		for _, x := range got {
			if x.ID == a.ID || x.ID == b.ID {
				listed = append(listed, x)
			}
		}
		want := []domain.App{a, b}
		if b.ID < a.ID {
			want = []domain.App{b, a}
		}
		wantEqual(t, "ListApps", listed, want)
		if !slices.IsSortedFunc(got, func(x, y domain.App) int { return strings.Compare(x.ID, y.ID) }) {
			t.Fatal("ListApps is not ordered by id")
		}
	})

	t.Run("create needs an existing project", func(t *testing.T) {
		s, _ := newStore(t)
		wantNotFound(t, "CreateApp", s.CreateApp(ctx, newApp(uuid.NewString())))
	})

	t.Run("create stores the user and its events together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := newUser(a.ID, "new@example.test")
		ev := mustEvent(t, identityv1.EventUserCreated, a.ID)
		if err := s.CreateUser(ctx, u, ev); err != nil {
			t.Fatal(err)
		}
		got, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "created user", got, u)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("a refused create writes no event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		seedUser(t, s, newUser(a.ID, "taken@example.test"))
		if err := s.CreateUser(ctx, newUser(a.ID, "TAKEN@example.test"), mustEvent(t, identityv1.EventUserCreated, a.ID)); !errors.Is(err, domain.ErrEmailTaken) {
			t.Fatalf("CreateUser error = %v, want ErrEmailTaken", err)
		}
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("update stores the change and its events together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		ev := mustEvent(t, identityv1.EventAppChanged, a.ID)
		later := t0.Add(time.Hour)
		updated, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.Enabled, x.UpdatedAt, x.SealedPrivateKey, x.AccessTokenTTL = false, later, []byte{9}, time.Hour
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := a
		want.Enabled, want.UpdatedAt, want.SealedPrivateKey, want.AccessTokenTTL = false, later, []byte{9}, time.Hour
		wantEqual(t, "UpdateApp result", updated, want)
		got, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "app after update", got, want)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("a failing update changes nothing and writes no event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		_, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.Enabled = false
			return []events.Event{mustEvent(t, identityv1.EventAppChanged, a.ID)}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("UpdateApp error = %v, want fn's error", err)
		}
		got, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "app after failed update", got, a)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("extra origins change with the app and its event, and may become empty", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		ev := mustEvent(t, identityv1.EventAppChanged, a.ID)
		updated, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.ExtraOrigins = []string{"http://127.0.0.1:5173", "https://shop.example"}
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "origins after update", got.ExtraOrigins, []string{"http://127.0.0.1:5173", "https://shop.example"})
		wantEqual(t, "UpdateApp result", updated, got)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
		if _, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.ExtraOrigins = []string{}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetApp(ctx, a.ID)
		wantEqual(t, "origins after removing all", got.ExtraOrigins, []string{})
	})

	t.Run("branding is stored on create and update, and may return to the neutral look", func(t *testing.T) {
		s, _ := newStore(t)
		a := newApp(seedProject(t, s).ID)
		a.Branding = domain.Branding{DisplayName: "Schön & Co", AccentColor: "#0a7f3e", LogoURL: "https://cdn.example.test/logo.png", DefaultLanguage: "de"}
		if err := s.CreateApp(ctx, a); err != nil {
			t.Fatal(err)
		}
		got, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "branding as created", got.Branding, a.Branding)
		other := domain.Branding{DisplayName: "Shop", AccentColor: "#ffffff", LogoURL: "https://img.example.test:8443/l.svg?v=2", DefaultLanguage: "en"}
		updated, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.Branding = other
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetApp(ctx, a.ID)
		wantEqual(t, "branding after update", got.Branding, other)
		wantEqual(t, "UpdateApp result", updated, got)
		if _, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.Branding = domain.Branding{}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetApp(ctx, a.ID)
		wantEqual(t, "branding after reset", got.Branding, domain.Branding{})
		listed, _ := s.ListApps(ctx)
		for _, x := range listed {
			if x.ID == a.ID {
				wantEqual(t, "listed app", x, got)
			}
		}
	})

	t.Run("the email-verification policy is stored and changes with the app", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		got, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "policy as created", got.EmailVerification, domain.VerificationRequired)
		if _, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.EmailVerification = domain.VerificationOptional
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetApp(ctx, a.ID)
		wantEqual(t, "policy after update", got.EmailVerification, domain.VerificationOptional)
	})

	t.Run("the MFA policy and passkey sign-in are stored and change with the app", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		got, _ := s.GetApp(ctx, a.ID)
		wantEqual(t, "policy as created", got.MFA, domain.MFAOptional)
		for _, p := range []domain.MFAPolicy{domain.MFARequired, domain.MFAOff} {
			if _, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
				x.MFA = p
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			got, _ = s.GetApp(ctx, a.ID)
			wantEqual(t, "policy after update", got.MFA, p)
		}
		if _, err := s.UpdateApp(ctx, a.ID, func(x *domain.App) ([]events.Event, error) {
			x.PasskeySignIn = true
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetApp(ctx, a.ID)
		wantEqual(t, "passkey sign-in after update", got.PasskeySignIn, true)
	})

	t.Run("update of an unknown app is not found", func(t *testing.T) {
		s, _ := newStore(t)
		_, err := s.UpdateApp(ctx, uuid.NewString(), func(*domain.App) ([]events.Event, error) { return nil, nil })
		wantNotFound(t, "UpdateApp", err)
	})
}

func testAPIKeys(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("create stores the key and its event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		k := domain.APIKey{ID: "0123456789abcdef01234567", AppID: a.ID, Type: domain.KeyWrite, Name: "server",
			Description: "backend", Hash: []byte("hash-bytes"), CreatedAt: t0, UpdatedAt: t0}
		ev := mustEvent(t, identityv1.EventAPIKeyChanged, a.ID)
		if err := s.CreateAPIKey(ctx, k, ev); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAPIKey(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetAPIKey", got, k)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
		_, err = s.GetAPIKey(ctx, "ffffffffffffffffffffffff")
		wantNotFound(t, "unknown key", err)
	})

	t.Run("a key of an unknown app is refused without an event", func(t *testing.T) {
		s, outbox := newStore(t)
		k := domain.APIKey{ID: "abcdefabcdefabcdefabcdef", AppID: uuid.NewString(), Type: domain.KeyRead, Name: "k",
			Hash: []byte("h"), CreatedAt: t0, UpdatedAt: t0}
		wantNotFound(t, "CreateAPIKey", s.CreateAPIKey(ctx, k, mustEvent(t, identityv1.EventAPIKeyChanged, k.AppID)))
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})
}

func testUsers(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("create and get round trip every field", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		signIn := t0.Add(-time.Hour)
		u := domain.User{
			ID: uuid.NewString(), AppID: a.ID, TenantID: uuid.NewString(),
			Language: "de", Salutation: "Mr", SalutationOther: "Dr", AcceptedNewsletter: true,
			AcceptedNewsletterDate: "2025-01-01T00:00:00Z", LastAskedNewsletterSignUp: "2025-01-02T00:00:00Z",
			NewsletterMemberID: "nm-1", Name: "Ada Lovelace", GivenName: "Ada", FamilyName: "Lovelace",
			MiddleName: "King", Nickname: "ada", PreferredUsername: "ada.l", Profile: "https://p.test/ada",
			Picture: "https://p.test/ada.png", Website: "https://ada.test", Email: "Ada@Example.test",
			EmailVerified: true, Gender: "female", OtherGender: "x", Birthdate: "1815-12-10",
			Zoneinfo: "Europe/London", Locale: "en-GB", PhoneNumber: "+44 20 1234", PhoneNumberVerified: true,
			Frozen: true, Deleted: true, VerifiedByAdmin: true, IdpAEmailVerified: true, IdpBEmailVerified: true,
			IdpCEmailVerified: true, IdpDEmailVerified: true, LastSignInAt: &signIn, LastSignInIP: "192.0.2.1",
			CreatedAt: t0, UpdatedAt: t0.Add(time.Minute), PasswordHash: "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
			ReferredBy: uuid.NewString(),
		}
		seedUser(t, s, u)
		got, err := s.GetUser(ctx, a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetUser", got, u)
		got, err = s.GetUserByEmail(ctx, a.ID, "ada@EXAMPLE.test")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "GetUserByEmail (case-insensitive)", got, u)
	})

	t.Run("lookups are scoped to the app", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		_, err := s.GetUser(ctx, other.ID, u.ID)
		wantNotFound(t, "GetUser from another app", err)
		_, err = s.GetUserByEmail(ctx, other.ID, u.Email)
		wantNotFound(t, "GetUserByEmail from another app", err)
		_, err = s.UpdateUser(ctx, other.ID, u.ID, func(*domain.User) ([]events.Event, error) { return nil, nil })
		wantNotFound(t, "UpdateUser from another app", err)
		_, err = s.GetUser(ctx, a.ID, "not-a-uuid")
		wantNotFound(t, "malformed user id", err)
		_, err = s.GetUser(ctx, a.ID, uuid.NewString())
		wantNotFound(t, "unknown user", err)
	})

	t.Run("create needs an existing app", func(t *testing.T) {
		s, _ := newStore(t)
		wantNotFound(t, "CreateUser", s.CreateUser(ctx, newUser(uuid.NewString(), "u@example.test")))
	})

	t.Run("emails are unique per app case-insensitively", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		seedUser(t, s, newUser(a.ID, "same@example.test"))
		if err := s.CreateUser(ctx, newUser(a.ID, "SAME@example.test")); !errors.Is(err, domain.ErrEmailTaken) {
			t.Errorf("second user with the same email: error = %v, want ErrEmailTaken", err)
		}
		if err := s.CreateUser(ctx, newUser(other.ID, "same@example.test")); err != nil {
			t.Errorf("same email in another app: %v", err)
		}
	})

	t.Run("update stores the change and its events together", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		ev := mustEvent(t, identityv1.EventUserUpdated, a.ID)
		updated, err := s.UpdateUser(ctx, a.ID, u.ID, func(x *domain.User) ([]events.Event, error) {
			x.Name, x.Frozen = "New Name", true
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := u
		want.Name, want.Frozen = "New Name", true
		wantEqual(t, "UpdateUser result", updated, want)
		got, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user after update", got, want)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("a failing update changes nothing and writes no event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "u@example.test"))
		_, err := s.UpdateUser(ctx, a.ID, u.ID, func(x *domain.User) ([]events.Event, error) {
			x.Name = "changed"
			return []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("UpdateUser error = %v, want fn's error", err)
		}
		got, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user after failed update", got, u)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("an update to a taken email is refused without an event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := seedApp(t, s)
		seedUser(t, s, newUser(a.ID, "taken@example.test"))
		u := seedUser(t, s, newUser(a.ID, "mine@example.test"))
		_, err := s.UpdateUser(ctx, a.ID, u.ID, func(x *domain.User) ([]events.Event, error) {
			x.Email = "Taken@Example.test"
			return []events.Event{mustEvent(t, identityv1.EventUserUpdated, a.ID)}, nil
		})
		if !errors.Is(err, domain.ErrEmailTaken) {
			t.Fatalf("UpdateUser error = %v, want ErrEmailTaken", err)
		}
		got, _ := s.GetUser(ctx, a.ID, u.ID)
		wantEqual(t, "user after refused update", got, u)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("tenant users are the tenant's live users of the app, oldest first", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		tenant := uuid.NewString()
		at := func(u domain.User, d time.Duration, tenantID string) domain.User {
			u.CreatedAt, u.UpdatedAt, u.TenantID = t0.Add(d), t0.Add(d), tenantID
			return u
		}
		second := seedUser(t, s, at(newUser(a.ID, "second@example.test"), 2*time.Second, tenant))
		first := seedUser(t, s, at(newUser(a.ID, "first@example.test"), time.Second, tenant))
		deleted := at(newUser(a.ID, "deleted@example.test"), 0, tenant)
		deleted.Deleted = true
		seedUser(t, s, deleted)
		seedUser(t, s, at(newUser(a.ID, "othertenant@example.test"), 0, uuid.NewString()))
		seedUser(t, s, at(newUser(a.ID, "notenant@example.test"), 0, ""))
		seedUser(t, s, at(newUser(other.ID, "otherapp@example.test"), 0, tenant))

		got, err := s.ListTenantUsers(ctx, a.ID, tenant)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "ListTenantUsers", got, []domain.User{first, second})
		none, err := s.ListTenantUsers(ctx, a.ID, uuid.NewString())
		if err != nil || len(none) != 0 {
			t.Errorf("unknown tenant: %v, %v; want no users", none, err)
		}
	})
}

func testRoles(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, _ := newStore(t)
	a, other := seedApp(t, s), seedApp(t, s)
	var want []domain.UserRole
	for _, name := range []string{"editor", "admin", "viewer"} {
		r := domain.UserRole{ID: uuid.NewString(), AppID: a.ID, Name: name, CreatedAt: t0}
		if err := s.CreateRole(ctx, r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	if err := s.CreateRole(ctx, domain.UserRole{ID: uuid.NewString(), AppID: other.ID, Name: "other", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListRoles(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "ListRoles sorted by name", got, []domain.UserRole{want[1], want[0], want[2]})
	if err := s.CreateRole(ctx, domain.UserRole{ID: uuid.NewString(), AppID: a.ID, Name: "EDITOR", CreatedAt: t0}); !errors.Is(err, domain.ErrRoleTaken) {
		t.Errorf("second role named alike: error = %v, want ErrRoleTaken", err)
	}
	if err := s.CreateRole(ctx, domain.UserRole{ID: uuid.NewString(), AppID: other.ID, Name: "editor", CreatedAt: t0}); err != nil {
		t.Errorf("same role name in another app: %v", err)
	}
	wantNotFound(t, "role of an unknown app",
		s.CreateRole(ctx, domain.UserRole{ID: uuid.NewString(), AppID: uuid.NewString(), Name: "x", CreatedAt: t0}))
}
