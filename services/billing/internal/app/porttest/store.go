package porttest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// Factory returns a fresh, empty store and the outbox its writes feed.
type Factory func(t *testing.T) (app.Store, events.OutboxSource)

// Exempt declares a case the adapter under test cannot honour, and why.
type Exempt = conformance.Exempt

// Run runs the app.Store conformance suite against stores made by newStore.
func Run(t *testing.T, newStore Factory, exempt ...Exempt) {
	tests := []struct {
		name string
		run  func(t *testing.T, s app.Store, outbox events.OutboxSource)
	}{
		{"ConnectionsRoundTripEveryField", connectionsRoundTrip},
		{"FailedConnectionUpdateStoresNothing", failedConnectionUpdate},
		{"SettingsStartAtTheDefaultsAndPersist", settingsPersist},
		{"CatalogIsScopedToItsApp", catalogScoped},
		{"PromotionCodesAreUniquePerApp", promotionCodesUnique},
		{"UnknownAccountIsTheZeroAccount", unknownAccount},
		{"RedeemStoresPromotionAccountAndEventsTogether", redeemStoresTogether},
		{"FailedRedeemStoresNothing", failedRedeem},
		{"ATenantRedeemsAPromotionOnce", redeemOnce},
		{"ConcurrentRedemptionsOfTheLastUseLetOneWin", concurrentLastUse},
		{"AReferredTenantEarnsItsReferrerOneReward", referralRewardOncePerReferredTenant},
		{"FailedReferralRewardStoresNothing", failedReferralRewardStoresNothing},
		{"ConcurrentRewardsForOneReferredTenantApplyOnce", concurrentReferralRewardsApplyOnce},
		{"CustomersAreOnePerTenantConnectionAndMode", customersOnePerTenantAndMode},
		{"CheckoutSessionsRoundTripEveryField", checkoutsRoundTrip},
		{"SettleStoresSessionAccountAndEventsTogether", settleStoresSessionAccountAndEventsTogether},
		{"ConcurrentSettlesOfASessionApplyItOnce", concurrentSettlesApplyOnce},
		{"ChargesRoundTripEveryField", chargesRoundTrip},
		{"ASubscriptionHasOneOpenUpgradeEvenUnderARace", oneOpenUpgrade},
		{"SettleChargeStoresChargeAccountAndEventsTogether", settleChargeTogether},
		{"UpdateAccountStoresAccountAndEventsOrNothing", updateAccount},
		{"EventsCarryTheTraceOfTheirChange", eventsCarryTrace},
	}
	s := conformance.New(t, exempt)
	for _, tc := range tests {
		s.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					f, ok := r.(storeFailure)
					if !ok {
						panic(r)
					}
					t.Fatal(f.err)
				}
			}()
			store, outbox := newStore(t)
			tc.run(t, store, outbox)
		})
	}
}

// instant is cut to microseconds, the precision Postgres keeps, so read-backs compare equal.
var instant = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

var ctx = context.Background()

// must returns v or stops the case with err (Run turns the panic into a test failure).
func must[T any](v T, err error) T {
	if err != nil {
		panic(storeFailure{err})
	}
	return v
}

type storeFailure struct{ err error }

func connectionsRoundTrip(t *testing.T, s app.Store, _ events.OutboxSource) {
	c := domain.Connection{
		ID: uuid.NewString(), AppID: uuid.NewString(), Provider: domain.Pspx,
		TestKey: []byte{1, 2, 3}, LiveKey: []byte{4, 5},
		WebhookSecrets: []domain.WebhookSecret{{ID: uuid.NewString(), Test: true, Sealed: []byte{9}, CreatedAt: instant}},
		CreatedAt:      instant, UpdatedAt: instant,
	}
	if err := s.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := must(s.Connection(ctx, c.ID)); !reflect.DeepEqual(got, c) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, c)
	}
	list := must(s.Connections(ctx, c.AppID))
	if len(list) != 1 || !reflect.DeepEqual(list[0], c) {
		t.Fatalf("list: %+v", list)
	}
	if others := must(s.Connections(ctx, uuid.NewString())); len(others) != 0 {
		t.Fatalf("another app sees %d connections", len(others))
	}
	if _, err := s.Connection(ctx, uuid.NewString()); !errors.Is(err, domain.ErrConnectionNotFound) {
		t.Fatalf("unknown connection: %v", err)
	}
	updated := must(s.UpdateConnection(ctx, c.ID, func(c *domain.Connection) error {
		c.LiveKey, c.WebhookSecrets, c.UpdatedAt = []byte{7}, nil, instant.Add(time.Hour)
		return nil
	}))
	if got := must(s.Connection(ctx, c.ID)); !reflect.DeepEqual(got, updated) || len(got.WebhookSecrets) != 0 {
		t.Fatalf("after update:\n got %+v\nwant %+v", got, updated)
	}
}

func failedConnectionUpdate(t *testing.T, s app.Store, _ events.OutboxSource) {
	c := domain.Connection{ID: uuid.NewString(), AppID: uuid.NewString(), Provider: domain.Pspy, TestKey: []byte{1}, CreatedAt: instant, UpdatedAt: instant}
	if err := s.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateConnection(ctx, c.ID, func(c *domain.Connection) error { c.TestKey = []byte{2}; return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got := must(s.Connection(ctx, c.ID)); !reflect.DeepEqual(got, c) {
		t.Fatalf("a failed update changed the connection: %+v", got)
	}
}

func settingsPersist(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	if got := must(s.Settings(ctx, appID)); got != domain.DefaultSettings(appID) {
		t.Fatalf("defaults: %+v", got)
	}
	want := domain.Settings{AppID: appID, ConnectionID: "c", PaymentReturnURL: "https://app.example/paid",
		FailedPaymentsToFreeze: 5, OneTimePaymentValidDays: 30, ReferralPromotionID: "p"}
	must(s.UpdateSettings(ctx, appID, func(st *domain.Settings) error { *st = want; return nil }))
	if got := must(s.Settings(ctx, appID)); got != want {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	if _, err := s.UpdateSettings(ctx, appID, func(st *domain.Settings) error { st.ConnectionID = "x"; return errors.New("no") }); err == nil {
		t.Fatal("a failing update succeeded")
	}
	if got := must(s.Settings(ctx, appID)); got != want {
		t.Fatalf("a failed update changed settings: %+v", got)
	}
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

func promotion(appID, code string, maxRedemptions int32) domain.Promotion {
	return domain.Promotion{ID: uuid.NewString(), AppID: appID, Code: code, Name: "Welcome", Description: "ten days",
		FreeUnits: 2, FreeDays: 10, ValidFrom: instant, ValidUntil: instant.AddDate(1, 0, 0),
		MaxRedemptions: maxRedemptions, Active: true, CreatedAt: instant}
}

func promotionCodesUnique(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	p := promotion(appID, "WELCOME", 0)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePromotion(ctx, promotion(appID, "WELCOME", 0)); !errors.Is(err, domain.ErrCodeTaken) {
		t.Fatalf("same code again: %v", err)
	}
	if err := s.CreatePromotion(ctx, promotion(uuid.NewString(), "WELCOME", 0)); err != nil {
		t.Fatalf("another app's same code: %v", err)
	}
	list := must(s.Promotions(ctx, appID))
	if len(list) != 1 || !reflect.DeepEqual(list[0], p) {
		t.Fatalf("list:\n got %+v\nwant %+v", list, p)
	}
	off := must(s.UpdatePromotion(ctx, appID, p.ID, func(p *domain.Promotion) error { p.Active = false; return nil }))
	if got := must(s.Promotions(ctx, appID)); got[0].Active || off.Active {
		t.Fatal("deactivation not stored")
	}
	if _, err := s.UpdatePromotion(ctx, uuid.NewString(), p.ID, func(*domain.Promotion) error { return nil }); !errors.Is(err, domain.ErrPromotionNotFound) {
		t.Fatalf("another app updated the promotion: %v", err)
	}
}

func unknownAccount(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	if got := must(s.Account(ctx, appID, tenantID)); !reflect.DeepEqual(got, domain.Account{AppID: appID, TenantID: tenantID}) {
		t.Fatalf("zero account: %+v", got)
	}
}

// redeemWith redeems code for a new tenant with fn applying the promotion as the use case does.
func redeemWith(s app.Store, appID, code, tenantID string, ev events.Event) (domain.Account, error) {
	return s.Redeem(ctx, app.Redemption{AppID: appID, Code: code, TenantID: tenantID, UserID: uuid.NewString()},
		func(p *domain.Promotion, a *domain.Account) ([]events.Event, error) {
			if err := p.Redeem(a, instant); err != nil {
				return nil, err
			}
			return []events.Event{ev}, nil
		})
}

func newEvent(t *testing.T, appID string) events.Event {
	ev, err := events.New(app.Source, billingv1.EventPromotionRedeemed, appID, &billingv1.PromotionRedeemed{AppId: appID})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func pending(_ *testing.T, outbox events.OutboxSource) []string {
	evs := must(outbox.Pending(ctx, 1000))
	var ids []string
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	return ids
}

func eventsCarryTrace(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID := uuid.NewString()
	want := map[string]string{}
	for range 2 {
		ev := newEvent(t, appID)
		traced, traceparent := conformance.Traced(ctx)
		must(s.UpdateAccount(traced, appID, uuid.NewString(), func(a *domain.Account) ([]events.Event, error) {
			a.Touch(instant)
			return []events.Event{ev}, nil
		}))
		want[ev.ID] = traceparent
	}
	if got := conformance.Traceparents(t, outbox); !reflect.DeepEqual(got, want) {
		t.Fatalf("pending events' traceparents = %v, want %v", got, want)
	}
}

func redeemStoresTogether(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	p := promotion(appID, "SPRING", 0)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, appID)
	a := must(redeemWith(s, appID, "SPRING", tenantID, ev))
	if a.Revision != 1 || a.State.FreeUnits != 2 || !a.State.FreeUntil.Equal(instant.AddDate(0, 0, 10)) {
		t.Fatalf("returned account %+v", a)
	}
	if got := must(s.Account(ctx, appID, tenantID)); !reflect.DeepEqual(got, a) {
		t.Fatalf("stored account:\n got %+v\nwant %+v", got, a)
	}
	if got := must(s.Promotions(ctx, appID)); got[0].Redemptions != 1 {
		t.Fatalf("redemptions %d", got[0].Redemptions)
	}
	if ids := pending(t, outbox); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("outbox %v, want [%s]", ids, ev.ID)
	}
}

func failedRedeem(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	if err := s.CreatePromotion(ctx, promotion(appID, "SPRING", 0)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, err := s.Redeem(ctx, app.Redemption{AppID: appID, Code: "SPRING", TenantID: tenantID, UserID: uuid.NewString()},
		func(p *domain.Promotion, a *domain.Account) ([]events.Event, error) {
			_ = p.Redeem(a, instant)
			return nil, boom
		})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if a := must(s.Account(ctx, appID, tenantID)); a.Revision != 0 {
		t.Fatalf("a failed redemption stored the account: %+v", a)
	}
	if got := must(s.Promotions(ctx, appID)); got[0].Redemptions != 0 {
		t.Fatal("a failed redemption was counted")
	}
	if ids := pending(t, outbox); len(ids) != 0 {
		t.Fatalf("a failed redemption left events %v", ids)
	}
	if _, err := redeemWith(s, appID, "SPRING", tenantID, newEvent(t, appID)); err != nil {
		t.Fatalf("the tenant cannot redeem after a failed attempt: %v", err)
	}
}

func redeemOnce(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	if err := s.CreatePromotion(ctx, promotion(appID, "ONCE", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := redeemWith(s, appID, "ONCE", tenantID, newEvent(t, appID)); err != nil {
		t.Fatal(err)
	}
	if _, err := redeemWith(s, appID, "ONCE", tenantID, newEvent(t, appID)); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("second redemption: %v", err)
	}
	if _, err := redeemWith(s, appID, "NOPE", tenantID, newEvent(t, appID)); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("unknown code: %v", err)
	}
	if _, err := redeemWith(s, uuid.NewString(), "ONCE", tenantID, newEvent(t, appID)); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("another app's code: %v", err)
	}
	if a := must(s.Account(ctx, appID, tenantID)); a.Revision != 1 || a.State.FreeUnits != 2 {
		t.Fatalf("account after a refused second redemption: %+v", a)
	}
}

func concurrentLastUse(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	if err := s.CreatePromotion(ctx, promotion(appID, "LAST", 1)); err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = redeemWith(s, appID, "LAST", uuid.NewString(), newEvent(t, appID))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, domain.ErrUnknownCode):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if got := must(s.Promotions(ctx, appID)); won != 1 || got[0].Redemptions != 1 {
		t.Fatalf("%d redemptions won, promotion counts %d; want exactly 1", won, got[0].Redemptions)
	}
}
