package app_test

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/sealbox"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

var clockTime = time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)

type fixture struct {
	svc     *app.Service
	store   *memory.Store
	outbox  *events.MemoryOutbox
	box     *sealbox.Box
	tenants *fakeTenants
	mailer  *fakeSender
	now     time.Time // the service's clock; tests move it
	app     domain.App
	user    domain.User
}

// cheapPasswords keep argon2id fast under -race; the PHC string records them like any others.
var cheapPasswords = password.Params{MemoryKiB: 64, Time: 1, Threads: 1}

const testIssuer = "f0af4569-4d5d-4c20-af95-5a80c74e30a6"

// newFixture builds the service on a memory store; opts adjust its configuration (limits, hasher).
func newFixture(t *testing.T, opts ...func(*app.Config)) *fixture {
	t.Helper()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{outbox: &events.MemoryOutbox{}, box: box, tenants: &fakeTenants{}, mailer: &fakeSender{}, now: clockTime}
	f.store = memory.New(f.outbox)
	cfg := app.Config{Store: f.store, Pepper: []byte("pepper"), Box: box,
		Clock: func() time.Time { return f.now }, Tenants: f.tenants, Issuer: testIssuer,
		PublicURL: "https://berth.test/", Passwords: cheapPasswords, Mailer: f.mailer}
	for _, o := range opts {
		o(&cfg)
	}
	f.svc, err = app.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.app = f.newApp(t)
	f.user = f.newUser(t, f.app.ID, "ada@example.test", "")
	return f
}

// fakeTenants stands in for the tenant service.
type fakeTenants struct {
	mu    sync.Mutex // sign-ups may run in parallel
	names []string
	fail  error
}

func (f *fakeTenants) CreateTenant(_ context.Context, _, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return "", f.fail
	}
	f.names = append(f.names, name)
	return uuid.NewString(), nil
}

func (f *fixture) newApp(t *testing.T) domain.App {
	t.Helper()
	ctx := context.Background()
	p, err := f.svc.CreateProject(ctx, "project")
	if err != nil {
		t.Fatal(err)
	}
	// Optional verification: most tests here are about sign-in mechanics, which the required
	// policy would put behind a mail (verification_test.go covers that).
	a, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: p.ID, Name: "app", RedirectURIs: []string{"https://app.test/cb", "https://app.test/return?from=login"},
		EmailVerification: "optional"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *fixture) newUser(t *testing.T, appID, email, tenantID string) domain.User {
	t.Helper()
	u, err := f.svc.CreateUser(context.Background(), app.NewUser{AppID: appID, TenantID: tenantID, Email: email, EmailVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// drain returns and clears the events written so far.
func (f *fixture) drain(t *testing.T) []events.Event {
	t.Helper()
	evs, err := f.outbox.Pending(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(evs))
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	if err := f.outbox.MarkPublished(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	return evs
}

func types(evs []events.Event) []eventsv1.Type {
	out := []eventsv1.Type{}
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// wantInvalid checks for a validation error on field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != field {
		t.Fatalf("error = %v, want a validation error on %q", err, field)
	}
}

func wantNotFound(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("error = %v, want not found", err)
	}
}

func TestNewRequiresStorePepperAndBox(t *testing.T) {
	box, _ := sealbox.New(make([]byte, sealbox.KeySize))
	store := memory.New(&events.MemoryOutbox{})
	for name, c := range map[string]app.Config{
		"no store":  {Pepper: []byte("p"), Box: box},
		"no pepper": {Store: store, Box: box},
		"no box":    {Store: store, Pepper: []byte("p")},
	} {
		if _, err := app.New(c); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}

func TestAPIKeyVerification(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	k, full, err := f.svc.CreateAPIKey(ctx, f.app.ID, "write", "server", "backend")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(types(f.drain(t)), identityv1.EventAPIKeyChanged) == false {
		t.Error("creating a key emitted no identity.apikey.changed event")
	}
	got, err := f.svc.VerifyAPIKey(ctx, full, strings.ToUpper(f.app.ID)) // X-CLIENT-ID in any case
	if err != nil {
		t.Fatal(err)
	}
	if got.KeyID != k.ID || got.AppID != f.app.ID || got.ProjectID != f.app.ProjectID || got.Type != "write" || !got.AppEnabled {
		t.Errorf("VerifyAPIKey = %+v", got)
	}

	other := f.newApp(t)
	wrongSecret := full[:len(full)-1] + map[bool]string{true: "0", false: "1"}[full[len(full)-1] != '0']
	_, unknown, _ := f.svc.CreateAPIKey(ctx, other.ID, "read", "other", "")
	cases := []struct{ name, key, client string }{
		{"wrong secret", wrongSecret, f.app.ID},
		{"malformed", "berth_nothex", f.app.ID},
		{"empty", "", f.app.ID},
		{"another app's client id", full, other.ID},
		{"key of another app", unknown, f.app.ID},
		{"unknown key id", "berth_ffffffffffffffffffffffff_" + full[len(full)-64:], f.app.ID},
	}
	for _, c := range cases {
		if _, err := f.svc.VerifyAPIKey(ctx, c.key, c.client); !fault.Is(err, fault.KindUnauthenticated) {
			t.Errorf("%s: error = %v, want Unauthenticated", c.name, err)
		}
	}

	if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
		t.Fatal(err)
	}
	got, err = f.svc.VerifyAPIKey(ctx, full, f.app.ID)
	if err != nil || got.AppEnabled {
		t.Errorf("disabled app: VerifyAPIKey = %+v, %v; want the key with AppEnabled false", got, err)
	}
}

func TestCreateAPIKeyRejectsUnknownTypeAndApp(t *testing.T) {
	f := newFixture(t)
	_, _, err := f.svc.CreateAPIKey(context.Background(), f.app.ID, "admin", "k", "")
	wantInvalid(t, err, "type")
	_, _, err = f.svc.CreateAPIKey(context.Background(), uuid.NewString(), "read", "k", "")
	wantNotFound(t, err)
}

func TestGetUserByIDOrEmailWithinTheCallersApp(t *testing.T) {
	f := newFixture(t)
	other := f.newApp(t)
	ctx := context.Background()
	cases := []struct {
		name, caller, ref string
		check             func(*testing.T, domain.User, error)
	}{
		{"by id", f.app.ID, f.user.ID, found(f.user.ID)},
		{"by email any case", f.app.ID, "ADA@Example.TEST", found(f.user.ID)},
		{"by upper-case id", f.app.ID, strings.ToUpper(f.user.ID), found(f.user.ID)},
		{"other app by id", other.ID, f.user.ID, func(t *testing.T, _ domain.User, err error) { wantNotFound(t, err) }},
		{"other app by email", other.ID, f.user.Email, func(t *testing.T, _ domain.User, err error) { wantNotFound(t, err) }},
		{"absent", f.app.ID, uuid.NewString(), func(t *testing.T, _ domain.User, err error) { wantNotFound(t, err) }},
		{"malformed", f.app.ID, "neither", func(t *testing.T, _ domain.User, err error) { wantInvalid(t, err, "userId") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := f.svc.GetUser(ctx, c.caller, c.ref)
			c.check(t, u, err)
		})
	}
}

func found(id string) func(*testing.T, domain.User, error) {
	return func(t *testing.T, u domain.User, err error) {
		if err != nil || u.ID != id {
			t.Fatalf("GetUser = %s, %v; want user %s", u.ID, err, id)
		}
	}
}

func TestSetAccessStatusFreezesIdempotently(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.drain(t)
	steps := []struct {
		name, status string
		wantFrozen   bool
		wantEvents   []eventsv1.Type
	}{
		{"freeze", "0", true, []eventsv1.Type{identityv1.EventUserFrozen}},
		{"freeze again", "0", true, []eventsv1.Type{}},
		{"unfreeze", "1", false, []eventsv1.Type{identityv1.EventUserUnfrozen}},
		{"unfreeze again", "1", false, []eventsv1.Type{}},
	}
	for _, s := range steps {
		if err := f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, f.user.ID, s.status); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID)
		evs := f.drain(t)
		if u.Frozen != s.wantFrozen || !slices.Equal(types(evs), s.wantEvents) {
			t.Errorf("%s: frozen=%t events=%v; want %t %v", s.name, u.Frozen, types(evs), s.wantFrozen, s.wantEvents)
		}
		for _, ev := range evs {
			var payload identityv1.UserChanged
			if err := ev.Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if payload.GetUserId() != f.user.ID || payload.GetUser().GetFreezed() != s.wantFrozen || ev.AppID != f.app.ID {
				t.Errorf("%s: event payload %+v", s.name, &payload)
			}
		}
	}
}

func TestSetAccessStatusRejectsBadInputAndOtherApps(t *testing.T) {
	f := newFixture(t)
	other := f.newApp(t)
	ctx := context.Background()
	wantInvalid(t, f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, f.user.ID, "2"), "accessStatus")
	wantInvalid(t, f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, f.user.ID, ""), "accessStatus")
	wantInvalid(t, f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, "ada@example.test", "0"), "userId")
	wantNotFound(t, f.svc.SetAccessStatus(ctx, other.ID, f.app.ID, f.user.ID, "0"))
	wantNotFound(t, f.svc.SetAccessStatus(ctx, other.ID, other.ID, f.user.ID, "0"))
	wantNotFound(t, f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, uuid.NewString(), "0"))
	if err := f.svc.SetAccessStatus(ctx, f.app.ID, strings.ToUpper(f.app.ID), strings.ToUpper(f.user.ID), "0"); err != nil {
		t.Errorf("upper-case ids: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestUpdateUserEmitsChangedFieldsOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.drain(t)
	patch := domain.UserPatch{Email: ptr("new@example.test"), Language: ptr("DE"), AcceptedNewsletter: ptr(true)}
	if err := f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, patch); err != nil {
		t.Fatal(err)
	}
	u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID)
	if u.Email != "new@example.test" || u.EmailVerified || u.Language != "de" ||
		u.AcceptedNewsletterDate != clockTime.Format(time.RFC3339) {
		t.Errorf("user after update: %+v", u)
	}
	evs := f.drain(t)
	if !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventUserUpdated, identityv1.EventUserEmailChanged}) {
		t.Fatalf("events = %v, want one %s and one %s", types(evs), identityv1.EventUserUpdated, identityv1.EventUserEmailChanged)
	}
	var emailChanged identityv1.UserEmailChanged
	if err := evs[1].Decode(&emailChanged); err != nil {
		t.Fatal(err)
	}
	if emailChanged.GetVerified() || emailChanged.GetEmail() != "new@example.test" || emailChanged.GetPreviousEmail() != "ada@example.test" {
		t.Errorf("a write key's change: email_changed = %v, want unverified from ada@ to new@", &emailChanged)
	}
	var payload identityv1.UserChanged
	if err := evs[0].Decode(&payload); err != nil {
		t.Fatal(err)
	}
	want := []string{"language", "email", "acceptedNewsletter", "acceptedNewsletterDate"}
	if !slices.Equal(payload.GetChangedFields(), want) {
		t.Errorf("changedFields = %v, want %v", payload.GetChangedFields(), want)
	}

	if err := f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, patch); err != nil {
		t.Fatal(err)
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("a patch that changes nothing emitted %v", types(evs))
	}
}

func TestUpdateUserErrors(t *testing.T) {
	f := newFixture(t)
	other := f.newApp(t)
	taken := f.newUser(t, f.app.ID, "taken@example.test", "")
	ctx := context.Background()
	f.drain(t)
	wantInvalid(t, f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: ptr("TAKEN@example.test")}), "user.email")
	wantInvalid(t, f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Website: ptr("nope")}), "user.website")
	wantInvalid(t, f.svc.UpdateUser(ctx, f.app.ID, "x", domain.UserPatch{}), "userId")
	wantNotFound(t, f.svc.UpdateUser(ctx, other.ID, f.user.ID, domain.UserPatch{Name: ptr("x")}))
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("failed updates emitted %v", types(evs))
	}
	u, _ := f.svc.GetUser(ctx, f.app.ID, f.user.ID)
	if u.Email != f.user.Email || taken.Email != "taken@example.test" {
		t.Errorf("a refused update changed the user: %+v", u)
	}
}

func TestAProvisionedUserIsAnnouncedWithTheWholeUser(t *testing.T) {
	f := newFixture(t)
	f.drain(t)
	u, err := f.svc.CreateUser(context.Background(), app.NewUser{AppID: f.app.ID, TenantID: f.user.TenantID, Email: "new@example.test", Name: "New"})
	if err != nil {
		t.Fatal(err)
	}
	evs := f.drain(t)
	if !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventUserCreated}) {
		t.Fatalf("events = %v", types(evs))
	}
	var c identityv1.UserChanged
	if err := evs[0].Decode(&c); err != nil || c.GetAppId() != f.app.ID || c.GetUserId() != u.ID || c.GetTenantRef() != f.user.TenantID ||
		c.GetUser().GetName() != "New" || len(c.GetChangedFields()) != 0 {
		t.Errorf("UserChanged (created) = %+v, %v", &c, err)
	}
	// A refused provisioning announces nothing.
	if _, err := f.svc.CreateUser(context.Background(), app.NewUser{AppID: f.app.ID, Email: "NEW@example.test"}); err == nil {
		t.Fatal("a second user with the same email was created")
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("a refused create wrote %v", types(evs))
	}
}

func TestCreateUserRejectsDuplicateEmailInTheApp(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.CreateUser(context.Background(), app.NewUser{AppID: f.app.ID, Email: "Ada@example.test"})
	wantInvalid(t, err, "email")
	_, err = f.svc.CreateUser(context.Background(), app.NewUser{AppID: uuid.NewString(), Email: "x@example.test"})
	wantNotFound(t, err)
}

func TestRolesAndPublicKeyOnlyForTheCallersApp(t *testing.T) {
	f := newFixture(t)
	other := f.newApp(t)
	ctx := context.Background()
	for _, name := range []string{"b", "a"} {
		if _, err := f.svc.CreateUserRole(ctx, f.app.ID, name); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.svc.CreateUserRole(ctx, f.app.ID, "B")
	wantInvalid(t, err, "name")
	roles, err := f.svc.ListUserRoles(ctx, f.app.ID, f.app.ID)
	if err != nil || len(roles) != 2 || roles[0].Name != "a" {
		t.Errorf("ListUserRoles = %+v, %v", roles, err)
	}
	_, err = f.svc.ListUserRoles(ctx, other.ID, f.app.ID)
	wantNotFound(t, err)

	pemKey, err := f.svc.PublicKey(ctx, f.app.ID, f.app.ID)
	if err != nil || pemKey != f.app.PublicKeyPEM {
		t.Errorf("PublicKey = %q, %v", pemKey, err)
	}
	_, err = f.svc.PublicKey(ctx, other.ID, f.app.ID)
	wantNotFound(t, err)
}

// publicOf opens the app's sealed private key and returns its public half, proving that the stored
// pair matches and that the private key is sealed to the app.
func publicOf(t *testing.T, box *sealbox.Box, a domain.App) string {
	t.Helper()
	der, err := box.Open(a.SealedPrivateKey, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(priv.(crypto.Signer).Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}))
}

func TestRotateAppKeyReplacesTheSealedPair(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if publicOf(t, f.box, f.app) != f.app.PublicKeyPEM {
		t.Fatal("created app's sealed private key does not match its public key")
	}
	f.drain(t)
	rotated, err := f.svc.RotateAppKey(ctx, f.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.PublicKeyPEM == f.app.PublicKeyPEM || publicOf(t, f.box, rotated) != rotated.PublicKeyPEM {
		t.Error("rotation did not install a new matching key pair")
	}
	evs := f.drain(t)
	var payload identityv1.AppChanged
	if len(evs) != 1 || evs[0].Decode(&payload) != nil || !payload.GetKeyRotated() || !payload.GetEnabled() {
		t.Errorf("rotation events = %v (%+v)", types(evs), &payload)
	}
	_, err = f.svc.RotateAppKey(ctx, uuid.NewString())
	wantNotFound(t, err)
}

// A key rotation ends every session of the app; each user who lost one hears of it like of any
// other ending, with the reason key_rotated, in the rotation's own write.
func TestRotatingTheKeyWritesSessionsRevokedForEveryUserWithALiveSession(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, grace := f.session(t, "grace@example.test")
	f.session(t, "grace@example.test")
	_, lin := f.session(t, "lin@example.test")
	f.signUp(t, "idle@example.test") // no session: no event
	f.drain(t)
	if _, err := f.svc.RotateAppKey(ctx, f.app.ID); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, ev := range sessionsRevoked(t, f.drain(t)) {
		if ev.GetReason() != domain.RevokedKeyRotated || !ev.GetAll() || ev.GetAppId() != f.app.ID {
			t.Errorf("sessions revoked event %+v, want reason %s for all of the app's sessions", ev, domain.RevokedKeyRotated)
		}
		got[ev.GetUserId()] += len(ev.GetSessionIds())
	}
	if want := map[string]int{grace.ID: 2, lin.ID: 1}; !maps.Equal(got, want) {
		t.Errorf("revoked sessions per user = %v, want %v", got, want)
	}
	for _, u := range []string{grace.ID, lin.ID} {
		if left := f.sessions(t, u, ""); len(left) != 0 {
			t.Errorf("user %s keeps sessions %+v after the rotation", u, left)
		}
	}
}

func TestSetAppEnabledEmitsOnlyOnChange(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.drain(t)
	for _, s := range []struct {
		enabled bool
		events  int
	}{{false, 1}, {false, 0}, {true, 1}} {
		a, err := f.svc.SetAppEnabled(ctx, f.app.ID, s.enabled)
		if err != nil || a.Enabled != s.enabled {
			t.Fatalf("SetAppEnabled(%t) = %+v, %v", s.enabled, a, err)
		}
		if evs := f.drain(t); len(evs) != s.events {
			t.Errorf("SetAppEnabled(%t) emitted %d events, want %d", s.enabled, len(evs), s.events)
		}
	}
}

func TestEnablingOrDisablingAnAppTellsThisProcesssKeyCacheAtOnce(t *testing.T) {
	var told []string
	f := newFixture(t, func(c *app.Config) { c.AppEnabledChanged = func(appID string) { told = append(told, appID) } })
	ctx := context.Background()
	if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || told[0] != f.app.ID {
		t.Fatalf("told %v after disabling, want [%s]: a cached key would stay valid until the event came back", told, f.app.ID)
	}
	if _, err := f.svc.SetAppEnabled(ctx, uuid.NewString(), true); err == nil || len(told) != 1 {
		t.Fatalf("an unknown app: err %v, told %v; want an error and nothing told", err, told)
	}
}

func TestCreateAppValidates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: uuid.NewString(), Name: "x"})
	wantNotFound(t, err)
	_, err = f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "x", RedirectURIs: []string{"https://a.test/#frag"}})
	wantInvalid(t, err, "redirectUris[0]")
	if f.app.AccessTokenTTL != 15*time.Minute || f.app.RefreshTokenTTL != 30*24*time.Hour {
		t.Errorf("default lifetimes = %v / %v", f.app.AccessTokenTTL, f.app.RefreshTokenTTL)
	}
	custom, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "x", AccessTokenTTL: time.Hour, RefreshTokenTTL: 48 * time.Hour})
	if err != nil || custom.AccessTokenTTL != time.Hour || custom.RefreshTokenTTL != 48*time.Hour {
		t.Errorf("custom lifetimes: %+v, %v", custom, err)
	}
	for _, c := range []struct {
		access, refresh time.Duration
		field           string
	}{
		{30 * time.Second, 0, "accessTokenTtlSeconds"},
		{25 * time.Hour, 0, "accessTokenTtlSeconds"},
		{time.Hour, time.Hour, "refreshTokenTtlSeconds"},
		{0, 400 * 24 * time.Hour, "refreshTokenTtlSeconds"},
	} {
		_, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "x", AccessTokenTTL: c.access, RefreshTokenTTL: c.refresh})
		wantInvalid(t, err, c.field)
	}
}

func TestListTenantUsers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	u := f.newUser(t, f.app.ID, "member@example.test", tenant)
	got, err := f.svc.ListTenantUsers(ctx, f.app.ID, tenant)
	if err != nil || len(got) != 1 || got[0].ID != u.ID {
		t.Errorf("ListTenantUsers = %+v, %v", got, err)
	}
	_, err = f.svc.ListTenantUsers(ctx, f.app.ID, "t")
	wantInvalid(t, err, "tenantId")
	_, err = f.svc.ListTenantUsers(ctx, "a", tenant)
	wantInvalid(t, err, "appId")
}

func TestAppOriginsChangeOnlyWithAnEventSoCachesForgetThem(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.drain(t)
	a, err := f.svc.AddAppOrigin(ctx, strings.ToUpper(f.app.ID), "https://WWW.app.test")
	if err != nil || !slices.Equal(a.ExtraOrigins, []string{"https://www.app.test"}) {
		t.Fatalf("AddAppOrigin = %q, %v", a.ExtraOrigins, err)
	}
	evs := f.drain(t)
	var payload identityv1.AppChanged
	if len(evs) != 1 || evs[0].Decode(&payload) != nil || !payload.GetOriginsChanged() || payload.GetAppId() != f.app.ID {
		t.Fatalf("add events = %v (%+v)", types(evs), &payload)
	}
	if _, err := f.svc.AddAppOrigin(ctx, f.app.ID, "https://www.app.test"); err != nil {
		t.Fatal(err)
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("adding a present origin emitted %v", types(evs))
	}
	got, err := f.svc.AppWebOrigins(ctx, f.app.ID)
	if err != nil || !slices.Equal(got, []string{"https://app.test", "https://www.app.test"}) {
		t.Fatalf("AppWebOrigins = %q, %v", got, err)
	}
	if _, err := f.svc.RemoveAppOrigin(ctx, f.app.ID, "https://www.app.test"); err != nil {
		t.Fatal(err)
	}
	if evs := f.drain(t); len(evs) != 1 {
		t.Errorf("remove emitted %v, want one app event", types(evs))
	}
	_, err = f.svc.AddAppOrigin(ctx, f.app.ID, "https://www.app.test/path")
	wantInvalid(t, err, "origin")
	_, err = f.svc.AddAppOrigin(ctx, uuid.NewString(), "https://www.app.test")
	wantNotFound(t, err)
	_, err = f.svc.AppWebOrigins(ctx, "not-an-id")
	wantNotFound(t, err)
}

func TestListWebOriginsHoldsEveryAppsOriginsOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// A second app shares the first one's redirect origin and adds one of its own.
	second, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "second", RedirectURIs: []string{"https://app.test/other"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddAppOrigin(ctx, second.ID, "https://Shop.test:443"); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.ListWebOrigins(ctx)
	if err != nil || !slices.Equal(got, []string{"https://app.test", "https://shop.test"}) {
		t.Fatalf("ListWebOrigins = %q, %v", got, err)
	}
}

func TestVerifiedTokensCarryTheAppsWebOrigins(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.AddAppOrigin(ctx, f.app.ID, "https://www.app.test"); err != nil {
		t.Fatal(err)
	}
	res, err := f.exchange(f.code(t, "origins@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.VerifyAccessToken(ctx, res.AccessToken)
	if err != nil || !slices.Equal(p.WebOrigins, []string{"https://app.test", "https://www.app.test"}) {
		t.Fatalf("principal origins = %q, %v", p.WebOrigins, err)
	}
}

func TestGetAppRefNamesOnlyEnabledApps(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a, err := f.svc.GetAppRef(ctx, strings.ToUpper(f.app.ID))
	if err != nil || a.ID != f.app.ID || len(a.RedirectURIs) == 0 || a.RedirectURIs[0] != f.app.RedirectURIs[0] {
		t.Fatalf("GetAppRef = %+v, %v; want the app with its redirect URIs", a, err)
	}
	_, err = f.svc.GetAppRef(ctx, uuid.NewString())
	wantNotFound(t, err)
	if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.GetAppRef(ctx, f.app.ID)
	wantNotFound(t, err)
}

func TestAppBrandingIsReplacedWholeAndReachesTheLoginPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a, err := f.svc.SetAppBranding(ctx, strings.ToUpper(f.app.ID), "Shop", "#0A7F3E", "https://cdn.example.test/l.png", "de")
	want := domain.Branding{DisplayName: "Shop", AccentColor: "#0a7f3e", LogoURL: "https://cdn.example.test/l.png", DefaultLanguage: "de"}
	if err != nil || a.Branding != want {
		t.Fatalf("SetAppBranding = %+v, %v", a.Branding, err)
	}
	described, err := f.svc.DescribeLogin(ctx, f.app.ID, f.app.RedirectURIs[0])
	if err != nil || described.Branding != want {
		t.Fatalf("DescribeLogin branding = %+v, %v", described.Branding, err)
	}
	if a, err = f.svc.SetAppBranding(ctx, f.app.ID, "", "", "", ""); err != nil || a.Branding != (domain.Branding{}) {
		t.Fatalf("back to neutral = %+v, %v", a.Branding, err)
	}
	_, err = f.svc.SetAppBranding(ctx, f.app.ID, "", "blue", "", "")
	wantInvalid(t, err, "branding.accentColor")
	if _, err := f.svc.SetAppBranding(ctx, uuid.NewString(), "", "", "", ""); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown app = %v", err)
	}
}

func TestRedirectURIsChangeWithAnAppEventAndTokenLifetimesWithout(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.drain(t)
	a, err := f.svc.SetAppRedirectURIs(ctx, f.app.ID, []string{"https://app.test/cb", "https://shop.test/cb"})
	if err != nil || !slices.Equal(a.RedirectURIs, []string{"https://app.test/cb", "https://shop.test/cb"}) {
		t.Fatalf("SetAppRedirectURIs = %q, %v", a.RedirectURIs, err)
	}
	var payload identityv1.AppChanged
	if evs := f.drain(t); len(evs) != 1 || evs[0].Decode(&payload) != nil || !payload.GetOriginsChanged() {
		t.Fatalf("events = %v, want one app.changed with its origins changed", types(evs))
	}
	if got, err := f.svc.AppWebOrigins(ctx, f.app.ID); err != nil || !slices.Contains(got, "https://shop.test") {
		t.Errorf("AppWebOrigins = %q, %v; want the new redirect URI's origin", got, err)
	}
	_, err = f.svc.SetAppRedirectURIs(ctx, f.app.ID, []string{"https://shop.test/cb#x"})
	wantInvalid(t, err, "redirectUris[0]")

	a, err = f.svc.SetAppTokenLifetimes(ctx, f.app.ID, 5*time.Minute, 7*24*time.Hour)
	if err != nil || a.AccessTokenTTL != 5*time.Minute || a.RefreshTokenTTL != 7*24*time.Hour {
		t.Fatalf("SetAppTokenLifetimes = %v/%v, %v", a.AccessTokenTTL, a.RefreshTokenTTL, err)
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Errorf("token lifetimes emitted %v: only identity uses them", types(evs))
	}
	_, err = f.svc.SetAppTokenLifetimes(ctx, f.app.ID, time.Hour, 30*time.Minute)
	wantInvalid(t, err, "refreshTokenTtlSeconds")
	_, err = f.svc.SetAppTokenLifetimes(ctx, uuid.NewString(), 0, 0)
	wantNotFound(t, err)
}
