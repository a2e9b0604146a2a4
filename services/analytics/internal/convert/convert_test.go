package convert

import (
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/berthhq/berth/pkg/protocopy"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// filled sets every scalar field of m to a value derived from its name, so a field copied from the
// wrong source, or not at all, shows.
func filled[M proto.Message](m M) M {
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		switch f.Kind() {
		case protoreflect.StringKind:
			r.Set(f, protoreflect.ValueOfString(string(f.Name())+"-value"))
		case protoreflect.BoolKind:
			r.Set(f, protoreflect.ValueOfBool(true))
		case protoreflect.Int32Kind:
			r.Set(f, protoreflect.ValueOfInt32(int32(f.Number())))
		}
	}
	return m
}

// sameNamedFields checks that every field of got, except those in own, equals the field of the
// same name in src.
func sameNamedFields(t *testing.T, got, src proto.Message, own ...protoreflect.Name) {
	t.Helper()
	g, s := got.ProtoReflect(), src.ProtoReflect()
	fields := g.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if slices.Contains(own, f.Name()) {
			continue
		}
		sf := s.Descriptor().Fields().ByName(f.Name())
		if sf == nil {
			t.Fatalf("%s.%s has no source field", g.Descriptor().Name(), f.Name())
		}
		if !g.Get(f).Equal(s.Get(sf)) {
			t.Errorf("%s.%s = %v, want %v", g.Descriptor().Name(), f.Name(), g.Get(f), s.Get(sf))
		}
	}
}

func TestSignInItemRendersEveryUserAndTenantField(t *testing.T) {
	in := domain.SignIn{ID: "0195d1c8-0000-7000-8000-000000000001", AppID: "app", UserID: "user", At: time.Date(2026, 3, 9, 10, 11, 12, 345000000, time.UTC)}
	user := filled(&identityv1.TenantUser{})
	user.Deleted = false
	tenant := filled(&tenantv1.Tenant{})
	list := SignInList([]app.SignInItem{{
		SignInRecord: app.SignInRecord{
			SignIn: in,
			User:   &app.UserSnapshot{AppID: "snapshot-app", UserID: "snapshot-user", TenantRef: "tenant-ref", User: user},
			Tenant: &app.TenantSnapshot{AppID: "snapshot-app", TenantID: "snapshot-tenant", Tenant: tenant},
		},
		DaysSince: 12,
	}})
	if list.GetKind() != "analyticsSignIn" || list.GetItemsLength() != 1 || len(list.GetItems()) != 1 {
		t.Fatalf("list %v, want one analyticsSignIn item", list)
	}
	item := list.GetItems()[0]
	if item.GetId() != in.ID || item.GetLastSignInAt() != "2026-03-09T10:11:12Z" || item.GetDaysSinceLastSignIn() != "12" ||
		item.GetNewsletterMemberId() != user.GetNewsletterMemberId() {
		t.Fatalf("item %v", item)
	}
	u := item.GetUser()
	sameNamedFields(t, u, user, "id", "appId", "tenantId", "tenant")
	if u.GetId() != "snapshot-user" || u.GetAppId() != "snapshot-app" || !u.GetTenantId() {
		t.Fatalf("user ids %q %q tenantId %v, want the snapshot's", u.GetId(), u.GetAppId(), u.GetTenantId())
	}
	sameNamedFields(t, u.GetTenant(), tenant, "id")
	if u.GetTenant().GetId() != "snapshot-tenant" {
		t.Fatalf("tenant id %q, want the snapshot's", u.GetTenant().GetId())
	}
}

func TestUserRendering(t *testing.T) {
	in := domain.SignIn{AppID: "app", UserID: "user", TenantRef: "tenant-at-sign-in"}
	tests := []struct {
		name        string
		snap        *app.UserSnapshot
		tenant      *app.TenantSnapshot
		wantName    string
		wantTenant  bool // tenantId
		wantDeleted bool
		wantNested  bool // tenant object present
	}{
		{"no snapshot yet: what the sign-in knows", nil, nil, "", true, false, false},
		{"user without tenant", &app.UserSnapshot{UserID: "user", User: &identityv1.TenantUser{Name: "Ada"}}, nil, "Ada", false, false, false},
		{"tenant not known yet", &app.UserSnapshot{UserID: "user", TenantRef: "t", User: &identityv1.TenantUser{Name: "Ada"}}, nil, "Ada", true, false, false},
		{"tenant known", &app.UserSnapshot{UserID: "user", TenantRef: "t", User: &identityv1.TenantUser{Name: "Ada"}},
			&app.TenantSnapshot{TenantID: "t", Tenant: &tenantv1.Tenant{Name: "Acme"}}, "Ada", true, false, true},
		{"marked deleted", &app.UserSnapshot{UserID: "user", Deleted: true, User: &identityv1.TenantUser{Name: "Ada"}}, nil, "Ada", false, true, false},
		{"deleted in identity's data", &app.UserSnapshot{UserID: "user", User: &identityv1.TenantUser{Name: "Ada", Deleted: true}}, nil, "Ada", false, true, false},
		{"known only from its deletion", &app.UserSnapshot{UserID: "user", Deleted: true}, nil, "", false, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := user(in.AppID, in.UserID, in.TenantRef, app.Payer{User: tc.snap, Tenant: tc.tenant})
			if u.GetId() != "user" || u.GetName() != tc.wantName || u.GetTenantId() != tc.wantTenant ||
				u.GetDeleted() != tc.wantDeleted || (u.GetTenant() != nil) != tc.wantNested {
				t.Fatalf("user %v: want name %q tenantId %v deleted %v nested tenant %v", u, tc.wantName, tc.wantTenant, tc.wantDeleted, tc.wantNested)
			}
		})
	}
}

// The user and tenant are copied by field name: a field renamed or retyped in identity's or
// tenant's .proto (or added to analytics' without a source) must fail here, not render empty.
func TestCopiedUserAndTenantFieldsExistInTheirSourcesWithTheSameKind(t *testing.T) {
	if err := userFields.Check(); err != nil {
		t.Error(err)
	}
	for _, f := range []*protocopy.Fields{tenantFields, tenantItemFields, tenantUserFields} {
		if err := f.Check(); err != nil {
			t.Error(err)
		}
	}
}
