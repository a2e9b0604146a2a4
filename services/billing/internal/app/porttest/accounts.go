package porttest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// accountCases are the Accounts port's cases.
var accountCases = []testCase{
	{"UnknownAccountIsTheZeroAccount", unknownAccount},
	{"UpdateAccountStoresAccountAndEventsOrNothing", updateAccount},
	{"EventsCarryTheTraceOfTheirChange", eventsCarryTrace},
}

func unknownAccount(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	if got := must(s.Account(ctx, appID, tenantID)); !reflect.DeepEqual(got, domain.Account{AppID: appID, TenantID: tenantID}) {
		t.Fatalf("zero account: %+v", got)
	}
}

func updateAccount(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	ev := newEvent(t, appID)
	acct := must(s.UpdateAccount(ctx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) {
		a.State.CancelsAtPeriodEnd(instant)
		a.Touch(instant)
		return []events.Event{ev}, nil
	}))
	if acct.Revision != 1 || !acct.State.PspxSubscriptionCancelAtPeriodEnd {
		t.Fatalf("account %+v", acct)
	}
	if got := must(s.Account(ctx, appID, tenantID)); !reflect.DeepEqual(got, acct) {
		t.Fatalf("stored account:\n got %+v\nwant %+v", got, acct)
	}
	if ids := pending(t, outbox); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("outbox %v, want [%s]", ids, ev.ID)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateAccount(ctx, appID, tenantID, func(a *domain.Account) ([]events.Event, error) {
		a.State.PaymentMethodsDeleted()
		a.Touch(instant)
		return []events.Event{newEvent(t, appID)}, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got := must(s.Account(ctx, appID, tenantID)); got.Revision != 1 {
		t.Fatalf("a failed update stored the account: %+v", got)
	}
	if ids := pending(t, outbox); len(ids) != 1 {
		t.Fatalf("a failed update stored events: %v", ids)
	}
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
