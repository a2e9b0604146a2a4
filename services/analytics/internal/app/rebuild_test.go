package app_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// storedLog is an event log holding events in order, as a stream would.
type storedLog struct {
	evs   []events.Event
	types []eventsv1.Type // the types the last replay asked for
}

func (l *storedLog) Replay(ctx context.Context, types []eventsv1.Type, fn events.Handler) (events.ReplayStats, error) {
	l.types = types
	var stats events.ReplayStats
	for _, ev := range l.evs {
		switch err := fn(ctx, ev); {
		case err == nil:
			stats.Applied++
		case errors.Is(err, events.ErrMalformed):
			stats.Malformed++
		default:
			return stats, err
		}
	}
	return stats, nil
}

// answers is everything the lists say about the app around t0.
func answers(t *testing.T, s app.Store, appID string) []any {
	t.Helper()
	signIns := listAll(t, s, appID)
	series, err := s.DailySeries(context.Background(), appID, domain.Range{From: domain.Day(t0).AddDate(0, 0, -6), To: domain.Day(t0)})
	if err != nil {
		t.Fatal(err)
	}
	return []any{signIns, subscriptionsOf(t, s, appID, t0.Add(-1000*time.Hour), t0.Add(1000*time.Hour)), oneTimesOf(t, s, appID), series}
}

func TestARebuildFromTheEventsYieldsTheSameAnswersAsTheConsumers(t *testing.T) {
	appID, tenantID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	log := &storedLog{evs: []events.Event{
		tenantChanged(t, tenantv1.EventTenantCreated, appID, tenantID, t0, "Acme"),
		signedIn(t, appID, userID, tenantID, t0.Add(time.Minute), "Ada"),
		money(t, billingv1.EventSubscriptionStarted, appID, tenantID, 2, t0.Add(time.Hour), &billingv1.MoneyChanged{
			SubscriptionId: "sub_1", PaidUntil: t0.Add(720 * time.Hour).Format(time.RFC3339), PaymentId: "cs_1", UserId: userID,
			Amount: 1190, Currency: "eur"}),
		money(t, billingv1.EventPaymentOneTime, appID, tenantID, 3, t0.Add(2*time.Hour), &billingv1.MoneyChanged{Units: 4, UserId: userID, Amount: 400, Currency: "eur"}),
		userChanged(t, identityv1.EventUserUpdated, appID, userID, tenantID, t0.Add(3*time.Hour), "Ada L."),
		event(t, identityv1.EventUserUpdated, appID, t0, &identityv1.UserChanged{AppId: appID, UserId: userID}), // malformed: no user
	}}
	consumed := memory.New()
	svc := service(t, app.Config{Store: consumed})
	for _, ev := range log.evs {
		_ = events.Handle(svc.Apply)(context.Background(), ev) // the malformed one is refused, as a consumer would
	}
	want := answers(t, consumed, appID)

	// The store being rebuilt holds stale data that no event supports: the rebuild drops it.
	rebuilt := memory.New()
	apply(t, service(t, app.Config{Store: rebuilt}), signedIn(t, appID, uuid.NewString(), "", t0, "Ghost"))
	stats, err := service(t, app.Config{Store: rebuilt, Events: log}).Rebuild(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (events.ReplayStats{Applied: 5, Malformed: 1}); stats != want {
		t.Fatalf("stats %+v, want %+v", stats, want)
	}
	if got := answers(t, rebuilt, appID); !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilt answers\n %+v\nconsumers' answers\n %+v", got, want)
	}
	if want := append(append(append([]eventsv1.Type{}, app.IdentityEvents...), app.TenantEvents...), app.BillingEvents...); !reflect.DeepEqual(log.types, want) {
		t.Fatalf("replayed types %v, want every type the consumers apply %v", log.types, want)
	}
}
