package porttest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Factory returns a fresh, empty store and the outbox its writes feed.
type Factory func(t *testing.T) (app.Store, events.OutboxSource)

// Exempt declares a case the adapter under test cannot honour, and why.
type Exempt = conformance.Exempt

// Run runs the app.Store conformance suite against stores made by newStore, skipping the
// cases exempt names.
func Run(t *testing.T, newStore Factory, exempt ...Exempt) {
	tests := []struct {
		name string
		run  func(t *testing.T, store app.Store, outbox events.OutboxSource)
	}{
		{"CreateThenGetReturnsEveryField", createThenGet},
		{"CreateStoresItsEventsWithTheTenant", createStoresEvents},
		{"CreateRefusesATakenID", createRefusesTakenID},
		{"TenantsAreScopedToTheirApp", scopedToApp},
		{"UnknownTenantIsNotFound", unknownIsNotFound},
		{"UpdateCreatesAndChangesAddresses", updateAddresses},
		{"UpdateStoresStateAndEventsTogether", updateStoresStateAndEvents},
		{"EventsCarryTheTraceOfTheirChange", eventsCarryTrace},
		{"FailedUpdateStoresNothing", failedUpdateStoresNothing},
		{"UpdatePersistsEveryField", updatePersistsEveryField},
		{"ConcurrentUpdatesDoNotLoseWrites", concurrentUpdates},
		{"ReturnedTenantsAreCopies", returnedTenantsAreCopies},
		{"SearchMatchesPrefixCaseInsensitively", searchMatchesPrefixCaseInsensitively},
		{"SearchAnswersBillingStateWithoutAddresses", searchAnswersBillingStateWithoutAddresses},
		{"SearchSkipsDeletedAndOtherAppsTenants", searchSkipsDeletedAndOtherAppsTenants},
		{"SearchPagesFollowTheCursorWithTiesBrokenByID", searchPagesFollowTheCursorWithTiesBrokenByID},
		{"SearchCursorIsStableUnderInserts", searchCursorIsStableUnderInserts},
	}
	s := conformance.New(t, exempt)
	for _, tc := range tests {
		s.Run(tc.name, func(t *testing.T) {
			store, outbox := newStore(t)
			tc.run(t, store, outbox)
		})
	}
}

// instant is cut to microseconds, the precision Postgres keeps, so read-backs compare equal.
var instant = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func newTenant(appID string) domain.Tenant {
	return domain.Tenant{
		ID:                          uuid.NewString(),
		AppID:                       appID,
		Name:                        "Acme",
		Description:                 "a tenant",
		PspxOneTimePaymentValidThru: "2026-12-31",
		CompanyName:                 "Acme GmbH",
		CompanyVATID:                "DE123456789",
		CompanyTaxType:              "eu_vat",
		CompanyTaxExempt:            "none",
		IsBusinessCustomer:          true,
		Billing: domain.Billing{
			PspxCustomerID: "cus_1", PspxPriceID: "price_1", PspxProductID: "prod_1", PspxSubscriptionID: "sub_1",
			PspxTrialingPriceID: "tp_1", PspxTrialingProductID: "tpr_1", PspxTrialingSubscriptionID: "ts_1",
			PspxCheckoutSessionID: "cs_1", PspxDefaultPaymentMethodID: "pm_1", PspxSubscriptionCancelAtPeriodEnd: true,
			PspxSubscriptionCancelAt: "2026-09-01T00:00:00Z", PspxPaymentMethod: "card", Mode: "subscription",
			PaidUntil: "2026-09-01", FreeUntil: "2026-04-01", PaidUnits: "10", FreeUnits: "3",
			PaymentFailed: true, PaymentFailedCount: 2, PaymentFailedDate: "2026-02-01",
		},
		ShippingAddress: &domain.Address{
			ID: uuid.NewString(), Type: domain.AddressShipping, Name: "Dock", City: "Hamburg", Country: "DE",
			Line1: "Kai 1", Line2: "Tor 3", PostalCode: "20457", State: "HH",
		},
		CreatedAt: instant,
		UpdatedAt: instant,
	}
}

func event(t *testing.T, tn domain.Tenant, eventType eventsv1.Type) events.Event {
	t.Helper()
	ev, err := events.New(app.Source, eventType, tn.AppID, &tenantv1.TenantChanged{AppId: tn.AppID, TenantId: tn.ID})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func mustCreate(t *testing.T, store app.Store, tn domain.Tenant, evs ...events.Event) {
	t.Helper()
	if err := store.CreateTenant(context.Background(), tn, evs...); err != nil {
		t.Fatalf("CreateTenant: %v", err)
	}
}

func mustGet(t *testing.T, store app.Store, appID, tenantID string) domain.Tenant {
	t.Helper()
	got, err := store.GetTenant(context.Background(), appID, tenantID)
	if err != nil {
		t.Fatalf("GetTenant: %v", err)
	}
	return got
}

func pendingIDs(t *testing.T, outbox events.OutboxSource) []string {
	t.Helper()
	evs, err := outbox.Pending(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	return ids
}

func createThenGet(t *testing.T, store app.Store, _ events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	if got := mustGet(t, store, tn.AppID, tn.ID); !reflect.DeepEqual(got, tn) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, tn)
	}
}

func createStoresEvents(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	ev := event(t, tn, tenantv1.EventTenantCreated)
	mustCreate(t, store, tn, ev)
	if got := pendingIDs(t, outbox); !reflect.DeepEqual(got, []string{ev.ID}) {
		t.Fatalf("pending events = %v, want [%s]", got, ev.ID)
	}
}

func createRefusesTakenID(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	again := tn
	again.Name = "Other"
	err := store.CreateTenant(context.Background(), again, event(t, again, tenantv1.EventTenantCreated))
	if !errors.Is(err, domain.ErrExists) {
		t.Fatalf("second create = %v, want domain.ErrExists", err)
	}
	if got := mustGet(t, store, tn.AppID, tn.ID); got.Name != "Acme" {
		t.Fatalf("name = %q after a refused create", got.Name)
	}
	if got := pendingIDs(t, outbox); len(got) != 0 {
		t.Fatalf("a refused create left events %v", got)
	}
}

func scopedToApp(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	other := uuid.NewString()
	if _, err := store.GetTenant(context.Background(), other, tn.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetTenant from another app = %v, want domain.ErrNotFound", err)
	}
	called := false
	err := store.UpdateTenant(context.Background(), other, tn.ID, func(x *domain.Tenant) ([]events.Event, error) {
		called = true
		x.Name = "hijacked"
		return []events.Event{event(t, *x, tenantv1.EventTenantUpdated)}, nil
	})
	if !errors.Is(err, domain.ErrNotFound) || called {
		t.Fatalf("UpdateTenant from another app = %v (fn called: %v), want domain.ErrNotFound without calling fn", err, called)
	}
	if got := mustGet(t, store, tn.AppID, tn.ID); got.Name != "Acme" {
		t.Fatalf("name = %q after another app's update", got.Name)
	}
	if got := pendingIDs(t, outbox); len(got) != 0 {
		t.Fatalf("another app's update left events %v", got)
	}
}

func unknownIsNotFound(t *testing.T, store app.Store, _ events.OutboxSource) {
	if _, err := store.GetTenant(context.Background(), uuid.NewString(), uuid.NewString()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetTenant = %v, want domain.ErrNotFound", err)
	}
	err := store.UpdateTenant(context.Background(), uuid.NewString(), uuid.NewString(), func(*domain.Tenant) ([]events.Event, error) {
		return nil, nil
	})
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("UpdateTenant = %v, want domain.ErrNotFound", err)
	}
}

func updateAddresses(t *testing.T, store app.Store, _ events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	tn.ShippingAddress = nil
	mustCreate(t, store, tn)
	if got := mustGet(t, store, tn.AppID, tn.ID); got.ShippingAddress != nil || got.BillingAddress != nil {
		t.Fatalf("new tenant has addresses %+v / %+v", got.ShippingAddress, got.BillingAddress)
	}
	billing := &domain.Address{ID: uuid.NewString(), Type: domain.AddressBilling, City: "Paris", Country: "FR"}
	update(t, store, tn, func(x *domain.Tenant) { x.BillingAddress = billing })
	got := mustGet(t, store, tn.AppID, tn.ID)
	if got.BillingAddress == nil || *got.BillingAddress != *billing || got.ShippingAddress != nil {
		t.Fatalf("addresses after creating billing: %+v / %+v", got.ShippingAddress, got.BillingAddress)
	}
	update(t, store, tn, func(x *domain.Tenant) { x.BillingAddress.City = "Lyon" })
	got = mustGet(t, store, tn.AppID, tn.ID)
	if got.BillingAddress.ID != billing.ID || got.BillingAddress.City != "Lyon" || got.BillingAddress.Country != "FR" {
		t.Fatalf("billing address after change: %+v", got.BillingAddress)
	}
}

func update(t *testing.T, store app.Store, tn domain.Tenant, change func(*domain.Tenant)) {
	t.Helper()
	err := store.UpdateTenant(context.Background(), tn.AppID, tn.ID, func(x *domain.Tenant) ([]events.Event, error) {
		change(x)
		return nil, nil
	})
	if err != nil {
		t.Fatalf("UpdateTenant: %v", err)
	}
}

func updateStoresStateAndEvents(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	var ev events.Event
	err := store.UpdateTenant(context.Background(), tn.AppID, tn.ID, func(x *domain.Tenant) ([]events.Event, error) {
		x.Name = "Renamed"
		ev = event(t, *x, tenantv1.EventTenantUpdated)
		return []events.Event{ev}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, store, tn.AppID, tn.ID); got.Name != "Renamed" {
		t.Fatalf("name = %q", got.Name)
	}
	if got := pendingIDs(t, outbox); !reflect.DeepEqual(got, []string{ev.ID}) {
		t.Fatalf("pending events = %v, want [%s]", got, ev.ID)
	}
}

func eventsCarryTrace(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	created := event(t, tn, tenantv1.EventTenantCreated)
	createCtx, createTrace := conformance.Traced(context.Background())
	if err := store.CreateTenant(createCtx, tn, created); err != nil {
		t.Fatalf("CreateTenant: %v", err)
	}
	updated := event(t, tn, tenantv1.EventTenantUpdated)
	updateCtx, updateTrace := conformance.Traced(context.Background())
	err := store.UpdateTenant(updateCtx, tn.AppID, tn.ID, func(x *domain.Tenant) ([]events.Event, error) {
		x.Name = "Traced"
		return []events.Event{updated}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{created.ID: createTrace, updated.ID: updateTrace}
	if got := conformance.Traceparents(t, outbox); !reflect.DeepEqual(got, want) {
		t.Fatalf("pending events' traceparents = %v, want %v", got, want)
	}
}

func failedUpdateStoresNothing(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	boom := errors.New("boom")
	err := store.UpdateTenant(context.Background(), tn.AppID, tn.ID, func(x *domain.Tenant) ([]events.Event, error) {
		x.Name = "Renamed"
		x.ShippingAddress.City = "Bremen"
		x.BillingAddress = &domain.Address{ID: uuid.NewString(), Type: domain.AddressBilling, City: "Paris"}
		return []events.Event{event(t, *x, tenantv1.EventTenantUpdated)}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateTenant = %v, want the update function's error", err)
	}
	if got := mustGet(t, store, tn.AppID, tn.ID); !reflect.DeepEqual(got, tn) {
		t.Fatalf("failed update changed the tenant:\n got %+v\nwant %+v", got, tn)
	}
	if got := pendingIDs(t, outbox); len(got) != 0 {
		t.Fatalf("failed update left events %v", got)
	}
}

func updatePersistsEveryField(t *testing.T, store app.Store, _ events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	want := tn.Clone()
	update(t, store, tn, func(x *domain.Tenant) {
		// Billing events will use the same UpdateTenant, so every field must survive it.
		*x = domain.Tenant{
			ID: x.ID, AppID: x.AppID, Name: "B", Description: "d2", PspxOneTimePaymentValidThru: "2027-01-01",
			CompanyName: "B AG", CompanyVATID: "CH1", CompanyTaxType: "ch_vat", CompanyTaxExempt: "reverse",
			IsInvoicePending: true, Deleted: true,
			Billing: domain.Billing{
				PspxCustomerID: "cus_2", PspxPriceID: "price_2", PspxProductID: "prod_2", PspxSubscriptionID: "sub_2",
				PspxTrialingPriceID: "tp_2", PspxTrialingProductID: "tpr_2", PspxTrialingSubscriptionID: "ts_2",
				PspxCheckoutSessionID: "cs_2", PspxDefaultPaymentMethodID: "pm_2", PspxSubscriptionCancelAt: "x",
				PspxPaymentMethod: "x_promo_code", Mode: "payment", FreezedDueFailedPayment: true, PaidUntil: "p",
				FreeUntil: "f", PaidUnits: "1", FreeUnits: "2", Freezed: true, PaymentFailedCount: 3,
				PaymentFailedDate: "2026-03-01",
			},
			ShippingAddress: &domain.Address{ID: x.ShippingAddress.ID, Type: domain.AddressShipping, Deleted: true},
			CreatedAt:       x.CreatedAt,
			UpdatedAt:       instant.Add(time.Hour),
		}
		want = x.Clone()
	})
	if got := mustGet(t, store, tn.AppID, tn.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, want)
	}
}

func concurrentUpdates(t *testing.T, store app.Store, outbox events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	tn.Billing.PaymentFailedCount = 0
	mustCreate(t, store, tn)
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			errs <- store.UpdateTenant(context.Background(), tn.AppID, tn.ID, func(x *domain.Tenant) ([]events.Event, error) {
				x.Billing.PaymentFailedCount++
				ev, err := events.New(app.Source, tenantv1.EventTenantUpdated, x.AppID, &tenantv1.TenantChanged{TenantId: x.ID})
				return []events.Event{ev}, err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("UpdateTenant: %v", err)
		}
	}
	if got := mustGet(t, store, tn.AppID, tn.ID).Billing.PaymentFailedCount; got != writers {
		t.Fatalf("count = %d after %d concurrent increments", got, writers)
	}
	if got := pendingIDs(t, outbox); len(got) != writers {
		t.Fatalf("%d pending events, want %d", len(got), writers)
	}
}

func returnedTenantsAreCopies(t *testing.T, store app.Store, _ events.OutboxSource) {
	tn := newTenant(uuid.NewString())
	mustCreate(t, store, tn)
	got := mustGet(t, store, tn.AppID, tn.ID)
	got.Name = "changed"
	got.ShippingAddress.City = "changed"
	again := mustGet(t, store, tn.AppID, tn.ID)
	if again.Name != "Acme" || again.ShippingAddress.City != "Hamburg" {
		t.Fatalf("changing a returned tenant changed the stored one: %+v", again)
	}
}
