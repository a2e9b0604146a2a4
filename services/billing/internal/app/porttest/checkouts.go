package porttest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// checkoutCases are the Checkouts port's cases.
var checkoutCases = []testCase{
	{"CheckoutSessionsRoundTripEveryField", checkoutsRoundTrip},
	{"SettleStoresSessionAccountAndEventsTogether", settleStoresSessionAccountAndEventsTogether},
	{"ConcurrentSettlesOfASessionApplyItOnce", concurrentSettlesApplyOnce},
	{"ATenantsCheckoutsListNewestFirst", tenantCheckouts},
}

func checkoutSession(conn domain.Connection) domain.CheckoutSession {
	return domain.CheckoutSession{
		ID: uuid.NewString(), AppID: conn.AppID, TenantID: uuid.NewString(), ConnectionID: conn.ID, Provider: conn.Provider,
		Test: true, Mode: domain.ModePayment, Price: "price_1", TaxRate: "txr_1", Quantity: 3, Method: "card", CustomerID: "cus_1",
		UserID: uuid.NewString(), Hash: "ab", StateHash: "cd", ProviderSessionID: "cs_" + uuid.NewString()[:8], ProviderURL: "https://pay.example/cs",
		Status: domain.CheckoutOpen, CreatedAt: instant, UpdatedAt: instant,
	}
}

func checkoutsRoundTrip(t *testing.T, s app.Store, _ events.OutboxSource) {
	cs := checkoutSession(connectionFor(t, s))
	if err := s.CreateCheckout(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if got := must(s.Checkout(ctx, cs.ID)); !reflect.DeepEqual(got, cs) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, cs)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		if _, err := s.Checkout(ctx, id); !errors.Is(err, domain.ErrCheckoutNotFound) {
			t.Fatalf("Checkout(%q) = %v, want not found", id, err)
		}
	}
}

func settleStoresSessionAccountAndEventsTogether(t *testing.T, s app.Store, outbox events.OutboxSource) {
	cs := checkoutSession(connectionFor(t, s))
	if err := s.CreateCheckout(ctx, cs); err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, cs.AppID)
	settled, acct := must2(s.SettleCheckout(ctx, cs.ID, func(c *domain.CheckoutSession, a *domain.Account) ([]events.Event, error) {
		// The settle path reads the whole session (its payer and price name the payment's events).
		if !reflect.DeepEqual(*c, cs) || a.Revision != 0 || a.TenantID != cs.TenantID {
			t.Errorf("fn saw session %+v, account %+v", c, a)
		}
		c.Status, c.UpdatedAt = domain.CheckoutCompleted, instant.Add(time.Minute)
		a.State.UnitsBought(c.CustomerID, c.ProviderSessionID, "card", c.Quantity, instant, true)
		a.Touch(instant)
		return []events.Event{ev}, nil
	}))
	if settled.Status != domain.CheckoutCompleted || acct.Revision != 1 || acct.State.PaidUnits != 3 {
		t.Fatalf("settled %+v, account %+v", settled, acct)
	}
	if got := must(s.Checkout(ctx, cs.ID)); got.Status != domain.CheckoutCompleted || !got.UpdatedAt.Equal(instant.Add(time.Minute)) {
		t.Fatalf("stored session %+v", got)
	}
	if got := must(s.Account(ctx, cs.AppID, cs.TenantID)); !reflect.DeepEqual(got, acct) {
		t.Fatalf("stored account:\n got %+v\nwant %+v", got, acct)
	}
	if ids := pending(t, outbox); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("outbox %v, want [%s]", ids, ev.ID)
	}

	boom := errors.New("boom")
	_, _, err := s.SettleCheckout(ctx, cs.ID, func(c *domain.CheckoutSession, a *domain.Account) ([]events.Event, error) {
		c.Status = domain.CheckoutFailed
		a.Touch(instant)
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got := must(s.Checkout(ctx, cs.ID)); got.Status != domain.CheckoutCompleted {
		t.Fatalf("a failed settle stored the session: %+v", got)
	}
	if got := must(s.Account(ctx, cs.AppID, cs.TenantID)); got.Revision != 1 {
		t.Fatalf("a failed settle stored the account: %+v", got)
	}
	if _, _, err := s.SettleCheckout(ctx, uuid.NewString(), nil); !errors.Is(err, domain.ErrCheckoutNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// concurrentSettlesApplyOnce is the return page opened twice at once (or a webhook beside it):
// fn runs one at a time and the second sees what the first stored.
func concurrentSettlesApplyOnce(t *testing.T, s app.Store, _ events.OutboxSource) {
	cs := checkoutSession(connectionFor(t, s))
	if err := s.CreateCheckout(ctx, cs); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			must2(s.SettleCheckout(ctx, cs.ID, func(c *domain.CheckoutSession, a *domain.Account) ([]events.Event, error) {
				if c.Settled() {
					return nil, nil
				}
				c.Status = domain.CheckoutCompleted
				a.State.UnitsBought(c.CustomerID, c.ProviderSessionID, "card", c.Quantity, instant, true)
				a.Touch(instant)
				return nil, nil
			}))
		})
	}
	wg.Wait()
	if a := must(s.Account(ctx, cs.AppID, cs.TenantID)); a.Revision != 1 || a.State.PaidUnits != 3 {
		t.Fatalf("account after 8 concurrent settles: revision %d, paid units %d; want 1 and 3", a.Revision, a.State.PaidUnits)
	}
}

func tenantCheckouts(t *testing.T, s app.Store, _ events.OutboxSource) {
	conn := connectionFor(t, s)
	tenant := uuid.NewString()
	var want []domain.CheckoutSession
	for _, hours := range []int{1, 3, 2} {
		cs := checkoutSession(conn)
		cs.TenantID, cs.CreatedAt = tenant, instant.Add(time.Duration(hours)*time.Hour)
		if err := s.CreateCheckout(ctx, cs); err != nil {
			t.Fatal(err)
		}
		want = append(want, cs)
	}
	if err := s.CreateCheckout(ctx, checkoutSession(conn)); err != nil { // another tenant's
		t.Fatal(err)
	}
	if got := must(s.TenantCheckouts(ctx, conn.AppID, tenant, 2)); !reflect.DeepEqual(got, []domain.CheckoutSession{want[1], want[2]}) {
		t.Fatalf("newest two:\n got %+v\nwant %+v", got, want[1:])
	}
	if got := must(s.TenantCheckouts(ctx, uuid.NewString(), tenant, 10)); len(got) != 0 {
		t.Fatalf("another app sees the tenant's checkouts: %+v", got)
	}
}
