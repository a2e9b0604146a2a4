package events_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/natstest"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestReplayHandsOverEveryStoredEventOfTheTypesInStreamOrder(t *testing.T) {
	bus, conn := natstest.New(t)
	u1, u2 := newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u2")
	unwanted := newEvent(t, identityv1.EventAppChanged, "a1")
	t1, bad := newEvent(t, tenantv1.EventTenantCreated, "t1"), newEvent(t, tenantv1.EventTenantCreated, "t2")
	publish(t, bus, u1, unwanted, t1)
	if err := conn.Publish(bus.Subject(identityv1.EventUserUpdated), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	publish(t, bus, bad, u2)
	rawPublish(t, bus, u1) // stored twice, as a redelivery dedup did not catch: replayed twice

	var got []string
	stats, err := bus.Replay(context.Background(), []eventsv1.Type{identityv1.EventUserUpdated, tenantv1.EventTenantCreated},
		func(_ context.Context, ev events.Event) error {
			got = append(got, ev.ID)
			if ev.ID == bad.ID {
				return fmt.Errorf("%w: no tenant", events.ErrMalformed)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// Contexts are replayed in the order their first type was given, each in stream order.
	if want := []string{u1.ID, u2.ID, u1.ID, t1.ID, bad.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
	if want := (events.ReplayStats{Applied: 4, Malformed: 1}); stats != want {
		t.Fatalf("stats %+v, want %+v", stats, want)
	}
	// Events published after a replay are not part of it, and a replay can run again.
	publish(t, bus, newEvent(t, identityv1.EventUserUpdated, "u3"))
	again, err := bus.Replay(context.Background(), []eventsv1.Type{identityv1.EventUserUpdated}, func(context.Context, events.Event) error { return nil })
	if err != nil || again.Applied != 4 {
		t.Fatalf("second replay: %+v, %v; want the 4 user updates now stored", again, err)
	}
}

func TestReplayOfTypesNothingWasPublishedForEndsAtOnce(t *testing.T) {
	bus, _ := natstest.New(t)
	publish(t, bus, newEvent(t, identityv1.EventAppChanged, "a1"))
	stats, err := bus.Replay(context.Background(), []eventsv1.Type{identityv1.EventUserDeleted, tenantv1.EventTenantUpdated},
		func(context.Context, events.Event) error { t.Fatal("replayed an event"); return nil })
	if err != nil || stats != (events.ReplayStats{}) {
		t.Fatalf("Replay = %+v, %v; want nothing", stats, err)
	}
}

func TestReplayStopsAtAHandlerFailure(t *testing.T) {
	bus, _ := natstest.New(t)
	publish(t, bus, newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u2"))
	boom := errors.New("database down")
	calls := 0
	_, err := bus.Replay(context.Background(), []eventsv1.Type{identityv1.EventUserUpdated}, func(context.Context, events.Event) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Replay = %v after %d calls, want the handler's error after 1", err, calls)
	}
}
