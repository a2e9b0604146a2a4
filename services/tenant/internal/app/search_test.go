package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

func TestSearchTenantsRefusesBadRequestsInTheRightField(t *testing.T) {
	f := newFixture(t, &directory{})
	appID := uuid.NewString()
	cases := []struct {
		name, appID, query, after, field string
		size                             int32
	}{
		{"app id not a UUID", "app", "", "", "appId", 0},
		{"page size above 100", appID, "", "", "pageSize", 101},
		{"negative page size", appID, "", "", "pageSize", -5},
		{"a cursor not made by a search", appID, "", "%%%", "after", 0},
		{"a query with NUL", appID, "a\x00", "", "query", 0},
		{"a query longer than 254 bytes", appID, strings.Repeat("ä", 128), "", "query", 0},
	}
	for _, c := range cases {
		_, err := f.svc.SearchTenants(context.Background(), c.appID, c.query, c.size, c.after)
		ft, ok := fault.As(err)
		if !ok || ft.Kind() != fault.KindInvalid || ft.Field() != c.field {
			t.Errorf("%s: err = %v, want InvalidArgument on %q", c.name, err, c.field)
		}
	}
}

func TestSearchTenantsWalksEveryMatchOnceInNameOrder(t *testing.T) {
	f := newFixture(t, &directory{})
	ctx := context.Background()
	appID := uuid.NewString()
	for _, n := range []string{"Mia@example.test", "mike", "MILO", "mo", "Max"} {
		if _, err := f.svc.CreateTenant(ctx, domain.NewTenant{AppID: appID, Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	after := ""
	for pages := 1; ; pages++ {
		p, err := f.svc.SearchTenants(ctx, strings.ToUpper(appID), " mI ", 1, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range p.Tenants {
			got = append(got, tn.Name)
		}
		if p.Next == "" || pages > 5 {
			break
		}
		after = p.Next
	}
	if strings.Join(got, ",") != "Mia@example.test,mike,MILO" {
		t.Errorf("walked %v, want Mia@example.test, mike, MILO", got)
	}
}
