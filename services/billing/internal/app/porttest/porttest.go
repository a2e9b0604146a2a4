package porttest

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	"github.com/berthhq/berth/services/billing/internal/app"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// Factory returns a fresh, empty store and the outbox its writes feed.
type Factory func(t *testing.T) (app.Store, events.OutboxSource)

// Exempt declares a case the adapter under test cannot honour, and why.
type Exempt = conformance.Exempt

// Run runs the conformance suite of every storage port (app.Store) against stores made by
// newStore: one subtest per port, each case on a fresh store. An Exempt names a port.
func Run(t *testing.T, newStore Factory, exempt ...Exempt) {
	s := conformance.New(t, exempt)
	for _, port := range []struct {
		name  string
		cases []testCase
	}{
		{"Connections", connectionCases},
		{"Settings", settingsCases},
		{"Catalog", catalogCases},
		{"Promotions", promotionCases},
		{"Accounts", accountCases},
		{"Customers", customerCases},
		{"Checkouts", checkoutCases},
		{"Charges", chargeCases},
	} {
		s.Run(port.name, func(t *testing.T) {
			for _, tc := range port.cases {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore) })
			}
		})
	}
}

// testCase is one conformance case of a port: fn gets a fresh, empty store and its outbox.
type testCase struct {
	name string
	fn   func(t *testing.T, s app.Store, outbox events.OutboxSource)
}

// run runs the case on a fresh store; a store failure that must (or must2) met fails the case.
func (tc testCase) run(t *testing.T, newStore Factory) {
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
	tc.fn(t, store, outbox)
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

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(storeFailure{err})
	}
	return a, b
}

type storeFailure struct{ err error }

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
