package events_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// appendAndRead appends ev with ctx to one kind of outbox and reads the pending event back.
type appendAndRead func(t *testing.T, ctx context.Context, ev events.Event) events.Event

func memoryAppend(t *testing.T, ctx context.Context, ev events.Event) events.Event {
	t.Helper()
	var o events.MemoryOutbox
	o.Add(ctx, ev)
	pending, err := o.Pending(ctx, 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %v, %v; want the one event", pending, err)
	}
	return pending[0]
}

func pgAppend(t *testing.T, ctx context.Context, ev events.Event) events.Event {
	t.Helper()
	pool := pgPool(t)
	if err := events.InsertOutbox(ctx, pgxx.Q(ctx, pool), ev); err != nil {
		t.Fatal(err)
	}
	pending, err := events.NewPGOutbox(pool).Pending(ctx, 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %v, %v; want the one event", pending, err)
	}
	return pending[0]
}

func TestAnAppendedEventCarriesTheActorOfItsContext(t *testing.T) {
	key := events.Actor{Kind: events.ActorAPIKey, ID: "key-1", KeyType: "write", RequestID: "req-1", ClientAddress: "203.0.113.7"}
	preset := events.Actor{Kind: events.ActorProviderEvent, ID: "evt_123"}
	cases := []struct {
		name   string
		ctx    context.Context
		preset *events.Actor
		want   events.Actor
	}{
		{"the request's caller", events.WithActor(context.Background(), key), nil, key},
		{"Berth itself without a caller", context.Background(), nil, events.Actor{Kind: events.ActorSystem}},
		{"an actor the envelope already has", events.WithActor(context.Background(), key), &preset, preset},
	}
	outboxes := map[string]appendAndRead{"memory": memoryAppend, "postgres": pgAppend}
	for name, appendTo := range outboxes {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				ev := newEvent(t, identityv1.EventUserUpdated, "u1")
				ev.Actor = c.preset
				got := appendTo(t, c.ctx, ev)
				if got.Actor == nil || *got.Actor != c.want {
					t.Fatalf("actor = %+v, want %+v", got.Actor, c.want)
				}
				if ev.Actor != c.preset {
					t.Fatal("appending changed the caller's event")
				}
			})
		}
	}
}

func TestAnEnvelopeWithoutAnActorStillDecodes(t *testing.T) {
	ev := decodeRaw(t, []byte(`{"id":"0190a0b2-6f0e-7c3a-9d7e-1a2b3c4d5e6f","type":"identity.user.updated","source":"identity","appId":"app1","time":"2026-01-02T03:04:05Z","data":{}}`))
	if ev.Actor != nil {
		t.Fatalf("actor = %+v, want none", ev.Actor)
	}
	withActor := newEvent(t, identityv1.EventUserUpdated, "u1")
	withActor.Actor = &events.Actor{Kind: events.ActorOperator, ID: "m1"}
	body, err := json.Marshal(withActor)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeRaw(t, body); got.Actor == nil || *got.Actor != *withActor.Actor {
		t.Fatalf("round trip actor = %+v, want %+v", got.Actor, withActor.Actor)
	}
}

// What a consumer appends while reacting to an event is Berth's own doing, named by the consumer,
// whoever caused the event it reacts to; the event it received keeps its own actor.
func TestAConsumersReactionIsStampedAsBerthItselfNamedByTheConsumer(t *testing.T) {
	bus, _ := natstest.New(t)
	ev := newEvent(t, identityv1.EventUserUpdated, "u1")
	ev.Actor = &events.Actor{Kind: events.ActorAPIKey, ID: "k1", KeyType: "write"}
	var outbox events.MemoryOutbox
	received := make(chan events.Event, 1)
	consumer, err := bus.Consume(context.Background(), events.ConsumerConfig{
		Durable: "reactor", Types: []eventsv1.Type{ev.Type}, Inbox: events.NewMemoryInbox(),
		Handler: func(ctx context.Context, got events.Event) error {
			outbox.Add(ctx, newEvent(t, identityv1.EventUserFrozen, "u1"))
			received <- got
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	publish(t, bus, ev)
	got := <-received
	if got.Actor == nil || *got.Actor != *ev.Actor {
		t.Fatalf("the consumed event's actor = %+v, want %+v", got.Actor, ev.Actor)
	}
	pending, err := outbox.Pending(context.Background(), 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %v, %v", pending, err)
	}
	if want := (events.Actor{Kind: events.ActorSystem, ID: "reactor"}); pending[0].Actor == nil || *pending[0].Actor != want {
		t.Fatalf("the reaction's actor = %+v, want %+v", pending[0].Actor, want)
	}
}
