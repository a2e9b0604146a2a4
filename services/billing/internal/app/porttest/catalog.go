package porttest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// catalogCases are the Catalog port's cases.
var catalogCases = []testCase{
	{"CatalogIsScopedToItsApp", catalogScoped},
}

func catalogScoped(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	p := domain.CatalogPrice{ID: "price_" + uuid.NewString(), AppID: appID, ProductName: "Pro", Amount: 990, Currency: "EUR", Interval: "1 month", CreatedAt: instant}
	r := domain.CatalogTaxRate{ID: "txr_" + uuid.NewString(), AppID: appID, DisplayName: "VAT", BasisPoints: 1900, Inclusive: true, CreatedAt: instant}
	if err := s.CreateCatalogPrice(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateCatalogTaxRate(ctx, r); err != nil {
		t.Fatal(err)
	}
	prices, rates, err := s.Catalog(ctx, appID)
	if err != nil || len(prices) != 1 || prices[0] != p || len(rates) != 1 || rates[0] != r {
		t.Fatalf("catalog: %+v %+v %v", prices, rates, err)
	}
	prices, rates, err = s.Catalog(ctx, uuid.NewString())
	if err != nil || len(prices)+len(rates) != 0 {
		t.Fatalf("another app sees %d prices and %d rates (%v)", len(prices), len(rates), err)
	}
}
