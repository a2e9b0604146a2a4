package porttest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// seedNamed stores a tenant of the app for each name and returns them.
func seedNamed(t *testing.T, store app.Store, appID string, names ...string) []domain.Tenant {
	t.Helper()
	var out []domain.Tenant
	for _, n := range names {
		tn := newTenant(appID)
		tn.Name = n
		mustCreate(t, store, tn)
		out = append(out, tn)
	}
	return out
}

func search(t *testing.T, store app.Store, appID string, q keyset.Search) []domain.Tenant {
	t.Helper()
	got, err := store.SearchTenants(context.Background(), appID, q)
	if err != nil {
		t.Fatalf("SearchTenants(%+v): %v", q, err)
	}
	return got
}

func names(ts []domain.Tenant) string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

func byPrefix(p string, limit int) keyset.Search {
	return keyset.Search{Query: keyset.Query{Prefix: p}, Limit: limit}
}

func searchMatchesPrefixCaseInsensitively(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	seedNamed(t, store, appID, "bob@example.test", "Acme", "acme labs", "ACORN", "Zed")
	seedNamed(t, store, uuid.NewString(), "Acme of another app")
	if got := names(search(t, store, appID, byPrefix("ac", 10))); got != "Acme,acme labs,ACORN" {
		t.Errorf("prefix ac = %s, want Acme,acme labs,ACORN", got)
	}
	if got := names(search(t, store, appID, byPrefix("", 10))); got != "Acme,acme labs,ACORN,bob@example.test,Zed" {
		t.Errorf("every tenant = %s", got)
	}
	if got := search(t, store, appID, byPrefix("x", 10)); len(got) != 0 {
		t.Errorf("prefix x = %s, want none", names(got))
	}
}

func searchAnswersBillingStateWithoutAddresses(t *testing.T, store app.Store, _ events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	got := search(t, store, tn.AppID, byPrefix("acme", 10))
	if len(got) != 1 {
		t.Fatalf("found %d tenants, want 1", len(got))
	}
	want := tn
	want.ShippingAddress, want.BillingAddress = nil, nil
	if got[0].Billing != want.Billing || got[0].ShippingAddress != nil || got[0].CompanyName != want.CompanyName ||
		got[0].PspxOneTimePaymentValidThru != want.PspxOneTimePaymentValidThru || !got[0].CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("found %+v, want %+v", got[0], want)
	}
}

func searchSkipsDeletedAndOtherAppsTenants(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	ts := seedNamed(t, store, appID, "Acme", "Acme Two")
	stranger := seedNamed(t, store, uuid.NewString(), "Acme")[0]
	if err := store.UpdateTenant(context.Background(), appID, ts[1].ID, func(tn *domain.Tenant) ([]events.Event, error) {
		tn.MarkDeleted(instant)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := names(search(t, store, appID, byPrefix("acme", 10))); got != "Acme" {
		t.Errorf("after the deletion = %s, want Acme", got)
	}
	for name, id := range map[string]string{"deleted": ts[1].ID, "another app's": stranger.ID} {
		if got := search(t, store, appID, keyset.Search{Query: keyset.Query{ID: id}, Limit: 10}); len(got) != 0 {
			t.Errorf("the %s tenant by id = %s, want none", name, names(got))
		}
	}
	if got := search(t, store, appID, keyset.Search{Query: keyset.Query{ID: ts[0].ID}, Limit: 10}); len(got) != 1 || got[0].ID != ts[0].ID {
		t.Errorf("by id = %s, want Acme", names(got))
	}
}

func searchPagesFollowTheCursorWithTiesBrokenByID(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	// Equal names (in any case) tie on the text; their ids order them.
	ts := seedNamed(t, store, appID, "Acme", "ACME", "acme", "Acme", "Beta", "acme")
	var want []keyset.Key
	for _, tn := range ts {
		want = append(want, app.TenantKey(tn))
	}
	slices.SortFunc(want, keyset.Key.Compare)
	var got []keyset.Key
	q := byPrefix("", 4)
	for range 10 {
		page := search(t, store, appID, q)
		for _, tn := range page {
			got = append(got, app.TenantKey(tn))
		}
		if len(page) < q.Limit {
			break
		}
		last := app.TenantKey(page[len(page)-1])
		q.After = &last
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged = %v\nwant %v", got, want)
	}
}

func searchCursorIsStableUnderInserts(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	seedNamed(t, store, appID, "b1", "b2", "b3", "b4")
	first := search(t, store, appID, byPrefix("b", 2))
	if names(first) != "b1,b2" {
		t.Fatalf("first page = %s", names(first))
	}
	seedNamed(t, store, appID, "b0", "b15", "b5")
	last := app.TenantKey(first[1])
	q := byPrefix("b", 10)
	q.After = &last
	if got := names(search(t, store, appID, q)); got != "b3,b4,b5" {
		t.Errorf("next page after inserts = %s, want b3,b4,b5", got)
	}
}
