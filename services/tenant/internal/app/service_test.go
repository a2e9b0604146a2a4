package app_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func ptr[T any](v T) *T { return &v }

// directory is a UserDirectory with canned answers per tenant.
type directory struct {
	users map[string][]*identityv1.TenantUser
	err   error
}

func (d *directory) TenantUsers(_ context.Context, _, tenantID string) ([]*identityv1.TenantUser, error) {
	return d.users[tenantID], d.err
}

type fixture struct {
	svc    *app.Service
	store  app.Store
	outbox *events.MemoryOutbox
	now    time.Time
}

func newFixture(t *testing.T, dir app.UserDirectory) *fixture {
	t.Helper()
	f := &fixture{outbox: &events.MemoryOutbox{}, now: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	f.store = memory.New(f.outbox)
	svc, err := app.New(app.Config{Store: f.store, Users: dir, Clock: func() time.Time { return f.now }, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

func TestNewRequiresStoreAndIDs(t *testing.T) {
	store := memory.New(&events.MemoryOutbox{})
	for name, c := range map[string]app.Config{
		"no store": {NewID: uuid.NewString},
		"no ids":   {Store: store},
	} {
		if _, err := app.New(c); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}

func (f *fixture) create(t *testing.T, appID string) domain.Tenant {
	t.Helper()
	tn, err := f.svc.CreateTenant(context.Background(), domain.NewTenant{AppID: appID, Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// drain returns the pending events and marks them published.
func (f *fixture) drain(t *testing.T) []events.Event {
	t.Helper()
	evs, err := f.outbox.Pending(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	if err := f.outbox.MarkPublished(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	return evs
}

func fieldOf(err error) string {
	if f, ok := fault.As(err); ok && f.Kind() == fault.KindInvalid {
		return f.Field()
	}
	return ""
}

func TestCreateTenantPublishesCreatedEvent(t *testing.T) {
	f := newFixture(t, &directory{})
	appID := uuid.NewString()
	tn := f.create(t, appID)
	if !domain.IsUUID(tn.ID) || tn.AppID != appID || tn.Billing.PaidUnits != "0" {
		t.Fatalf("created %+v", tn)
	}
	evs := f.drain(t)
	if len(evs) != 1 || evs[0].Type != tenantv1.EventTenantCreated || evs[0].AppID != appID {
		t.Fatalf("events = %+v", evs)
	}
	var payload tenantv1.TenantChanged
	if err := evs[0].Decode(&payload); err != nil {
		t.Fatal(err)
	}
	if payload.GetTenantId() != tn.ID || payload.GetTenant().GetName() != "Acme" || payload.GetTenant().GetFreeUnits() != "0" {
		t.Fatalf("payload = %v", &payload)
	}
}

func TestGetTenant(t *testing.T) {
	appID := uuid.NewString()
	user := &identityv1.TenantUser{Id: uuid.NewString(), AppId: appID, Email: "a@example.com", TenantId: true}
	cases := []struct {
		name      string
		dirErr    error
		app       string
		tenant    func(created domain.Tenant) string
		wantErr   error
		wantField string
		wantUsers int
	}{
		{name: "own tenant with its users", app: appID, tenant: func(c domain.Tenant) string { return c.ID }, wantUsers: 1},
		{name: "tenant id in upper case", app: appID, tenant: func(c domain.Tenant) string { return strings.ToUpper(c.ID) }, wantUsers: 1},
		{name: "another app's tenant", app: uuid.NewString(), tenant: func(c domain.Tenant) string { return c.ID }, wantErr: domain.ErrNotFound},
		{name: "absent tenant", app: appID, tenant: func(domain.Tenant) string { return uuid.NewString() }, wantErr: domain.ErrNotFound},
		{name: "tenant id not a UUID", app: appID, tenant: func(domain.Tenant) string { return "t-1" }, wantField: "tenantId"},
		{name: "identity unreachable fails the read", dirErr: app.ErrUsersUnavailable, app: appID,
			tenant: func(c domain.Tenant) string { return c.ID }, wantErr: app.ErrUsersUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := &directory{err: tc.dirErr}
			f := newFixture(t, dir)
			created := f.create(t, appID)
			dir.users = map[string][]*identityv1.TenantUser{created.ID: {user}}
			v, err := f.svc.GetTenant(context.Background(), tc.app, tc.tenant(created))
			switch {
			case tc.wantField != "":
				if fieldOf(err) != tc.wantField {
					t.Fatalf("err = %v, want field %q", err, tc.wantField)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if v.Tenant.ID != created.ID || len(v.Users) != tc.wantUsers || v.Users[0].GetEmail() != "a@example.com" {
					t.Fatalf("view = %+v", v)
				}
			}
		})
	}
}

func TestUpdateTenant(t *testing.T) {
	appID := uuid.NewString()
	cases := []struct {
		name        string
		app         string
		body        domain.UpdateBody
		wantErr     error
		wantField   string
		wantChanged []string // nil: no event expected
	}{
		{name: "flat patch", app: appID, body: domain.UpdateBody{Kind: ptr("tenant"), Patch: domain.Patch{CompanyName: ptr("Acme AG")}},
			wantChanged: []string{"companyName"}},
		{name: "nested patch with an address", app: appID, body: domain.UpdateBody{Nested: &domain.UpdateBody{Patch: domain.Patch{
			BillingAddress: &domain.AddressPatch{Country: ptr("at")}}}},
			wantChanged: []string{"billingAddress", "billingAddress.country"}},
		{name: "no-op patch succeeds without an event", app: appID, body: domain.UpdateBody{Patch: domain.Patch{Name: ptr("Acme")}}},
		{name: "invalid field", app: appID, body: domain.UpdateBody{Nested: &domain.UpdateBody{Patch: domain.Patch{CompanyTaxExempt: ptr("maybe")}}},
			wantField: "tenant.companyTaxExempt"},
		{name: "another app's tenant", app: uuid.NewString(), body: domain.UpdateBody{Patch: domain.Patch{Name: ptr("X")}},
			wantErr: domain.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &directory{})
			created := f.create(t, appID)
			f.drain(t)
			f.now = f.now.Add(time.Minute)
			err := f.svc.UpdateTenant(context.Background(), tc.app, created.ID, tc.body, app.CredentialWriteKey)
			switch {
			case tc.wantField != "":
				if fieldOf(err) != tc.wantField {
					t.Fatalf("err = %v, want field %q", err, tc.wantField)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			}
			evs := f.drain(t)
			if tc.wantChanged == nil {
				if len(evs) != 0 {
					t.Fatalf("events = %+v; want none", evs)
				}
				return
			}
			if len(evs) != 1 || evs[0].Type != tenantv1.EventTenantUpdated {
				t.Fatalf("events = %+v; want one update", evs)
			}
			var payload tenantv1.TenantChanged
			if err := evs[0].Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(payload.GetChangedFields(), tc.wantChanged) {
				t.Fatalf("changedFields = %v, want %v", payload.GetChangedFields(), tc.wantChanged)
			}
			if payload.GetTenant().GetId() != created.ID || payload.GetTenant().GetUsers() != nil {
				t.Fatalf("snapshot = %v", payload.GetTenant())
			}
		})
	}
}

// pspxOneTimePaymentValidThru, isInvoicePending and companyTaxExempt are the app server's to
// decide: a tenant access token sending any of them (flat or nested) is refused whole, and nothing
// of its patch is stored; a write key may set them.
func TestServerOnlyTenantFieldsNeedAWriteKey(t *testing.T) {
	appID := uuid.NewString()
	for _, tc := range []struct {
		name  string
		body  domain.UpdateBody
		field string
	}{
		{"one-time payment", domain.UpdateBody{Patch: domain.Patch{Name: ptr("Mine"), PspxOneTimePaymentValidThru: ptr("2030-01-01")}}, "pspxOneTimePaymentValidThru"},
		{"invoice pending", domain.UpdateBody{Patch: domain.Patch{Name: ptr("Mine"), IsInvoicePending: ptr(false)}}, "isInvoicePending"},
		{"tax exempt, nested", domain.UpdateBody{Nested: &domain.UpdateBody{Patch: domain.Patch{Name: ptr("Mine"), CompanyTaxExempt: ptr("exempt")}}}, "tenant.companyTaxExempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &directory{})
			created := f.create(t, appID)
			f.drain(t)
			err := f.svc.UpdateTenant(context.Background(), appID, created.ID, tc.body, app.CredentialTenantToken)
			if f, ok := fault.As(err); !ok || f.Kind() != fault.KindForbidden || !strings.Contains(f.Message(), tc.field) {
				t.Fatalf("token: err = %v, want forbidden naming %s", err, tc.field)
			}
			if evs := f.drain(t); len(evs) != 0 {
				t.Fatalf("refused patch published %+v", evs)
			}
			if got, _ := f.svc.GetTenant(context.Background(), appID, created.ID); got.Tenant.Name != "Acme" {
				t.Fatalf("refused patch applied: name %q", got.Tenant.Name)
			}
			if err := f.svc.UpdateTenant(context.Background(), appID, created.ID, tc.body, app.CredentialWriteKey); err != nil {
				t.Fatalf("write key: %v", err)
			}
			if got, _ := f.svc.GetTenant(context.Background(), appID, created.ID); got.Tenant.Name != "Mine" {
				t.Fatalf("write key patch not applied: name %q", got.Tenant.Name)
			}
		})
	}
	// Every other listed field stays open to the token.
	f := newFixture(t, &directory{})
	created := f.create(t, appID)
	if err := f.svc.UpdateTenant(context.Background(), appID, created.ID, domain.UpdateBody{Patch: domain.Patch{
		Name: ptr("Mine"), CompanyName: ptr("Acme AG"), IsBusinessCustomer: ptr(true),
	}}, app.CredentialTenantToken); err != nil {
		t.Fatalf("token with open fields: %v", err)
	}
}

func TestGetMyTenant(t *testing.T) {
	appID := uuid.NewString()
	cases := []struct {
		name    string
		app     string
		tenant  func(created domain.Tenant) string
		wantErr error
	}{
		{name: "the token's tenant", app: appID, tenant: func(c domain.Tenant) string { return c.ID }},
		{name: "a token without a tenant", app: appID, tenant: func(domain.Tenant) string { return "" }, wantErr: domain.ErrNotFound},
		{name: "a tenant id that is not a UUID", app: appID, tenant: func(domain.Tenant) string { return "t-1" }, wantErr: domain.ErrNotFound},
		{name: "a token of another app", app: uuid.NewString(), tenant: func(c domain.Tenant) string { return c.ID }, wantErr: domain.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &directory{})
			created := f.create(t, appID)
			v, err := f.svc.GetMyTenant(context.Background(), tc.app, tc.tenant(created))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || v.Tenant.ID != created.ID {
				t.Fatalf("view = %+v, err = %v", v, err)
			}
		})
	}
}

func TestUserDeleted(t *testing.T) {
	appID := uuid.NewString()
	withSubscription := func(tn *domain.Tenant) { tn.Billing.PspxSubscriptionID = "sub_1" }
	alreadyDeleted := func(tn *domain.Tenant) { tn.Deleted = true }
	cases := []struct {
		name        string
		setup       func(*domain.Tenant) // state billing or an earlier event left; nil: as created
		app         string
		tenant      func(created domain.Tenant) string
		usersLeft   int32
		wantErr     error
		wantField   string
		wantChanged []string // nil: no change and no event expected
		wantCancel  bool
	}{
		{name: "last user of a subscribed tenant", setup: withSubscription, app: appID,
			tenant:      func(c domain.Tenant) string { return c.ID },
			wantChanged: []string{"deleted", "pspxSubscriptionCancelAtPeriodEnd"}, wantCancel: true},
		{name: "last user of a tenant without subscription", app: appID,
			tenant:      func(c domain.Tenant) string { return strings.ToUpper(c.ID) },
			wantChanged: []string{"deleted"}},
		{name: "users left keep the tenant", setup: withSubscription, app: appID,
			tenant: func(c domain.Tenant) string { return c.ID }, usersLeft: 2},
		{name: "a user without a tenant", app: appID, tenant: func(domain.Tenant) string { return "" }},
		{name: "a tenant deleted before", setup: alreadyDeleted, app: appID,
			tenant: func(c domain.Tenant) string { return c.ID }},
		{name: "another app's tenant", app: uuid.NewString(),
			tenant: func(c domain.Tenant) string { return c.ID }, wantErr: domain.ErrNotFound},
		{name: "tenant ref not a UUID", app: appID, tenant: func(domain.Tenant) string { return "t-1" }, wantField: "tenantRef"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, &directory{})
			created := f.create(t, appID)
			if tc.setup != nil {
				err := f.store.UpdateTenant(ctx, appID, created.ID, func(tn *domain.Tenant) ([]events.Event, error) {
					tc.setup(tn)
					return nil, nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			before, err := f.store.GetTenant(ctx, appID, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			f.drain(t)
			f.now = f.now.Add(time.Minute)

			err = f.svc.UserDeleted(ctx, tc.app, tc.tenant(created), tc.usersLeft)
			switch {
			case tc.wantField != "":
				if fieldOf(err) != tc.wantField {
					t.Fatalf("err = %v, want field %q", err, tc.wantField)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			}

			after, err := f.store.GetTenant(ctx, appID, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			evs := f.drain(t)
			if tc.wantChanged == nil {
				if !reflect.DeepEqual(after, before) || len(evs) != 0 {
					t.Fatalf("tenant %+v, events %+v; want no change", after, evs)
				}
				return
			}
			if !after.Deleted || after.Billing.PspxSubscriptionCancelAtPeriodEnd != tc.wantCancel || !after.UpdatedAt.Equal(f.now) {
				t.Fatalf("after = %+v", after)
			}
			if len(evs) != 1 || evs[0].Type != tenantv1.EventTenantUpdated {
				t.Fatalf("events = %+v; want one update", evs)
			}
			var payload tenantv1.TenantChanged
			if err := evs[0].Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(payload.GetChangedFields(), tc.wantChanged) || !payload.GetTenant().GetDeleted() {
				t.Fatalf("payload = %v, want changedFields %v", &payload, tc.wantChanged)
			}

			// The same event again finds nothing left to do.
			if err := f.svc.UserDeleted(ctx, tc.app, tc.tenant(created), tc.usersLeft); err != nil {
				t.Fatal(err)
			}
			if evs := f.drain(t); len(evs) != 0 {
				t.Fatalf("repeated event emitted %+v", evs)
			}
		})
	}
}

func TestGetTenantRefNamesOnlyLiveTenantsOfTheApp(t *testing.T) {
	appID := uuid.NewString()
	cases := []struct {
		name      string
		deleted   bool
		app       string
		tenant    func(created domain.Tenant) string
		wantErr   error
		wantField string
	}{
		{name: "the app's live tenant", app: appID, tenant: func(c domain.Tenant) string { return strings.ToUpper(c.ID) }},
		{name: "a deleted tenant", deleted: true, app: appID, tenant: func(c domain.Tenant) string { return c.ID }, wantErr: domain.ErrNotFound},
		{name: "another app's tenant", app: uuid.NewString(), tenant: func(c domain.Tenant) string { return c.ID }, wantErr: domain.ErrNotFound},
		{name: "an unknown tenant", app: appID, tenant: func(domain.Tenant) string { return uuid.NewString() }, wantErr: domain.ErrNotFound},
		{name: "tenant id not a UUID", app: appID, tenant: func(domain.Tenant) string { return "t-1" }, wantField: "tenantId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, &directory{})
			created := f.create(t, appID)
			if tc.deleted {
				if err := f.svc.UserDeleted(ctx, appID, created.ID, 0); err != nil {
					t.Fatal(err)
				}
			}
			got, err := f.svc.GetTenantRef(ctx, tc.app, tc.tenant(created))
			switch {
			case tc.wantField != "":
				if fieldOf(err) != tc.wantField {
					t.Fatalf("err = %v, want field %q", err, tc.wantField)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case got.ID != created.ID || got.Name != "Acme":
				t.Fatalf("got %+v, want tenant %s named Acme", got, created.ID)
			}
		})
	}
}
