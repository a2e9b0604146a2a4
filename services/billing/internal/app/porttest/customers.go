package porttest

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// customerCases are the Customers port's cases.
var customerCases = []testCase{
	{"CustomersAreOnePerTenantConnectionAndMode", customersOnePerTenantAndMode},
}

func customersOnePerTenantAndMode(t *testing.T, s app.Store, _ events.OutboxSource) {
	conn := connectionFor(t, s)
	tenantID := uuid.NewString()
	if _, err := s.Customer(ctx, conn.ID, tenantID, true); !errors.Is(err, domain.ErrCustomerNotFound) {
		t.Fatalf("no customer yet: %v", err)
	}
	// Racing checkouts each made a provider customer; the store keeps the first.
	var wg sync.WaitGroup
	got := make([]domain.Customer, 4)
	for i := range got {
		wg.Go(func() {
			got[i] = must(s.SaveCustomer(ctx, domain.Customer{ID: "cus_" + uuid.NewString()[:8], ConnectionID: conn.ID,
				AppID: conn.AppID, TenantID: tenantID, Test: true, CreatedAt: instant}))
		})
	}
	wg.Wait()
	for _, c := range got[1:] {
		if c != got[0] {
			t.Fatalf("racing saves kept different customers: %+v vs %+v", c, got[0])
		}
	}
	if c := must(s.Customer(ctx, conn.ID, tenantID, true)); c != got[0] {
		t.Fatalf("read back %+v, want %+v", c, got[0])
	}
	live := must(s.SaveCustomer(ctx, domain.Customer{ID: "cus_live", ConnectionID: conn.ID, AppID: conn.AppID, TenantID: tenantID, CreatedAt: instant}))
	if live.ID != "cus_live" || live.Test {
		t.Fatalf("live mode has its own customer: %+v", live)
	}
	// A provider event names the customer by the provider's id.
	if c := must(s.CustomerByProviderID(ctx, got[0].ID)); c != got[0] {
		t.Fatalf("by provider id %+v, want %+v", c, got[0])
	}
	if _, err := s.CustomerByProviderID(ctx, "cus_unknown"); !errors.Is(err, domain.ErrCustomerNotFound) {
		t.Fatalf("unknown provider id: %v", err)
	}
}
