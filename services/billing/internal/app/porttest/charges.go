package porttest

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// chargeCases are the Charges port's cases.
var chargeCases = []testCase{
	{"ChargesRoundTripEveryField", chargesRoundTrip},
	{"ASubscriptionHasOneOpenUpgradeEvenUnderARace", oneOpenUpgrade},
	{"SettleChargeStoresChargeAccountAndEventsTogether", settleChargeTogether},
	{"ATenantsChargesListNewestFirst", tenantCharges},
}

func upgradeCharge(conn domain.Connection, tenantID, subscriptionID string) domain.Charge {
	return domain.Charge{
		ID: uuid.NewString(), AppID: conn.AppID, TenantID: tenantID, ConnectionID: conn.ID, Test: true, Kind: domain.ChargeUpgrade,
		CustomerID: "cus_1", UserID: uuid.NewString(), Price: "price_pro", TaxRate: "txr_1", Quantity: 2, FromPrice: "price_basic", FromQuantity: 1, Amount: 1234,
		SubscriptionID: subscriptionID, Status: domain.ChargeOpen, CreatedAt: instant, UpdatedAt: instant,
	}
}

func chargesRoundTrip(t *testing.T, s app.Store, _ events.OutboxSource) {
	c := upgradeCharge(connectionFor(t, s), uuid.NewString(), "sub_"+uuid.NewString()[:8])
	c.InvoiceID = "in_1"
	if err := s.CreateCharge(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := must(s.OpenUpgrade(ctx, c.SubscriptionID)); !reflect.DeepEqual(got, c) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, c)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		if _, _, err := s.SettleCharge(ctx, id, nil); !errors.Is(err, domain.ErrChargeNotFound) {
			t.Fatalf("SettleCharge(%q) = %v, want not found", id, err)
		}
	}
	if got := must(s.Charge(ctx, c.ID)); !reflect.DeepEqual(got, c) {
		t.Fatalf("Charge:\n got %+v\nwant %+v", got, c)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		if _, err := s.Charge(ctx, id); !errors.Is(err, domain.ErrChargeNotFound) {
			t.Fatalf("Charge(%q) = %v", id, err)
		}
	}
	if _, err := s.OpenUpgrade(ctx, "sub_none"); !errors.Is(err, domain.ErrChargeNotFound) {
		t.Fatalf("OpenUpgrade of a subscription without one = %v", err)
	}
}

// oneOpenUpgrade is plan changes racing: one invoice is issued, the other callers are told an
// upgrade is pending; once it settles, the next upgrade may start. Likewise one subscription
// charge per tenant.
func oneOpenUpgrade(t *testing.T, s app.Store, _ events.OutboxSource) {
	conn := connectionFor(t, s)
	tenantID, subID := uuid.NewString(), "sub_"+uuid.NewString()[:8]
	var (
		wg              sync.WaitGroup
		created, denied atomic.Int32
	)
	for range 6 {
		wg.Go(func() {
			err := s.CreateCharge(ctx, upgradeCharge(conn, tenantID, subID))
			switch {
			case err == nil:
				created.Add(1)
			case errors.Is(err, domain.ErrChargePending):
				denied.Add(1)
			default:
				t.Errorf("CreateCharge: %v", err)
			}
		})
	}
	wg.Wait()
	if created.Load() != 1 || denied.Load() != 5 {
		t.Fatalf("created %d, denied %d; want 1 and 5", created.Load(), denied.Load())
	}
	open := must(s.OpenUpgrade(ctx, subID))
	must2(s.SettleCharge(ctx, open.ID, func(c *domain.Charge, _ *domain.Account) ([]events.Event, error) {
		c.Status = domain.ChargeFailed
		return nil, nil
	}))
	if err := s.CreateCharge(ctx, upgradeCharge(conn, tenantID, subID)); err != nil {
		t.Fatalf("an upgrade after the last one failed: %v", err)
	}
	// One subscription charge per tenant may be open.
	sub := upgradeCharge(conn, tenantID, "")
	sub.Kind, sub.FromPrice, sub.FromQuantity = domain.ChargeSubscription, "", 0
	if err := s.CreateCharge(ctx, sub); err != nil {
		t.Fatal(err)
	}
	sub.ID = uuid.NewString()
	if err := s.CreateCharge(ctx, sub); !errors.Is(err, domain.ErrSubscriptionPending) {
		t.Fatalf("a second open subscription charge of a tenant: %v", err)
	}
	// Invoices of route 13 are not upgrades: any number may be open.
	for range 2 {
		c := upgradeCharge(conn, tenantID, subID)
		c.Kind, c.FromPrice, c.FromQuantity = domain.ChargeInvoice, "", 0
		if err := s.CreateCharge(ctx, c); err != nil {
			t.Fatalf("an invoice beside an open upgrade: %v", err)
		}
	}
}

func settleChargeTogether(t *testing.T, s app.Store, outbox events.OutboxSource) {
	c := upgradeCharge(connectionFor(t, s), uuid.NewString(), "sub_"+uuid.NewString()[:8])
	if err := s.CreateCharge(ctx, c); err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, c.AppID)
	settled, acct := must2(s.SettleCharge(ctx, c.ID, func(ch *domain.Charge, a *domain.Account) ([]events.Event, error) {
		// The settle path reads the whole charge (its payer and price name the payment's events).
		if !reflect.DeepEqual(*ch, c) {
			t.Errorf("fn saw charge\n got %+v\nwant %+v", *ch, c)
		}
		ch.Status, ch.InvoiceID, ch.UpdatedAt = domain.ChargeCompleted, "in_9", instant.Add(time.Minute)
		a.State.PlanChanged(ch.Price, "prod_1", ch.Quantity)
		a.Touch(instant)
		return []events.Event{ev}, nil
	}))
	if settled.Status != domain.ChargeCompleted || acct.Revision != 1 || acct.State.PspxPriceID != "price_pro" {
		t.Fatalf("settled %+v, account %+v", settled, acct)
	}
	if got := storedCharge(s, c.ID); got.Status != domain.ChargeCompleted || got.InvoiceID != "in_9" || !got.UpdatedAt.Equal(instant.Add(time.Minute)) {
		t.Fatalf("stored charge %+v", got)
	}
	if got := must(s.Account(ctx, c.AppID, c.TenantID)); !reflect.DeepEqual(got, acct) {
		t.Fatalf("stored account:\n got %+v\nwant %+v", got, acct)
	}
	if ids := pending(t, outbox); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("outbox %v, want [%s]", ids, ev.ID)
	}
	if _, err := s.OpenUpgrade(ctx, c.SubscriptionID); !errors.Is(err, domain.ErrChargeNotFound) {
		t.Fatalf("a settled upgrade is still open: %v", err)
	}
	boom := errors.New("boom")
	if _, _, err := s.SettleCharge(ctx, c.ID, func(ch *domain.Charge, a *domain.Account) ([]events.Event, error) {
		ch.Status = domain.ChargeFailed
		a.Touch(instant)
		return nil, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got := storedCharge(s, c.ID); got.Status != domain.ChargeCompleted {
		t.Fatalf("a failed settle stored the charge: %+v", got)
	}
	if _, _, err := s.SettleCharge(ctx, uuid.NewString(), nil); !errors.Is(err, domain.ErrChargeNotFound) {
		t.Fatalf("unknown charge: %v", err)
	}
}

// storedCharge reads a charge back as stored: the store's lock-and-settle with no change.
func storedCharge(s app.Store, id string) domain.Charge {
	c, _ := must2(s.SettleCharge(ctx, id, func(*domain.Charge, *domain.Account) ([]events.Event, error) { return nil, nil }))
	return c
}

func tenantCharges(t *testing.T, s app.Store, _ events.OutboxSource) {
	conn := connectionFor(t, s)
	tenant := uuid.NewString()
	var want []domain.Charge
	for _, hours := range []int{2, 1, 3} {
		c := upgradeCharge(conn, tenant, "sub_"+uuid.NewString()[:8])
		c.CreatedAt = instant.Add(time.Duration(hours) * time.Hour)
		if err := s.CreateCharge(ctx, c); err != nil {
			t.Fatal(err)
		}
		want = append(want, c)
	}
	if err := s.CreateCharge(ctx, upgradeCharge(conn, uuid.NewString(), "sub_other")); err != nil {
		t.Fatal(err)
	}
	if got := must(s.TenantCharges(ctx, conn.AppID, tenant, 2)); !reflect.DeepEqual(got, []domain.Charge{want[2], want[0]}) {
		t.Fatalf("newest two:\n got %+v\nwant %+v", got, []domain.Charge{want[2], want[0]})
	}
	if got := must(s.TenantCharges(ctx, uuid.NewString(), tenant, 10)); len(got) != 0 {
		t.Fatalf("another app sees the tenant's charges: %+v", got)
	}
}
