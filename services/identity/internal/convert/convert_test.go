package convert

import (
	"testing"
	"time"

	"github.com/berthhq/berth/services/identity/internal/domain"
)

// The contract documents tenantId, lastSignInAt and lastSignInIp as booleans; these tests pin that
// rendering so a "fix" towards the richer types cannot slip in.
func TestDocumentedBooleanFields(t *testing.T) {
	signIn := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name                          string
		user                          domain.User
		tenant, lastAt, lastIP, froze bool
	}{
		{"fresh user", domain.User{}, false, false, false, false},
		{"tenant member who signed in", domain.User{TenantID: "t", LastSignInAt: &signIn, LastSignInIP: "192.0.2.1", Frozen: true}, true, true, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, tu := User(c.user), TenantUser(c.user)
			if u.GetKind() != KindUser || u.GetTenantId() != c.tenant || u.GetFreezed() != c.froze {
				t.Errorf("User = %v", u)
			}
			if tu.GetTenantId() != c.tenant || tu.GetLastSignInAt() != c.lastAt || tu.GetLastSignInIp() != c.lastIP || tu.GetFreezed() != c.froze {
				t.Errorf("TenantUser = %v", tu)
			}
		})
	}
}

func TestTimestampIsRFC3339UTC(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	cases := map[string]time.Time{
		"":                     {},
		"2025-01-02T02:04:05Z": time.Date(2025, 1, 2, 3, 4, 5, 999, berlin),
	}
	for want, in := range cases {
		if got := Timestamp(in); got != want {
			t.Errorf("Timestamp(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestUserRolesCountsItems(t *testing.T) {
	list := UserRoles([]domain.UserRole{{ID: "1", Name: "a"}, {ID: "2", Name: "b"}})
	if list.GetKind() != KindUserRole || list.GetItemsLength() != 2 || list.GetItems()[1].GetName() != "b" {
		t.Errorf("UserRoles = %v", list)
	}
	if empty := UserRoles(nil); empty.GetItemsLength() != 0 || empty.GetItems() == nil {
		t.Errorf("UserRoles(nil) = %v; want an empty, non-nil list", empty)
	}
}
