package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// garbled is ev with a payload that is JSON but not its declared message: appId is a string.
func garbled(ev events.Event) events.Event {
	ev.Data = json.RawMessage(`{"appId": 5}`)
	return ev
}

func TestHandleDecodesTheDeclaredPayloadAndAcknowledgesWhatNeverDecodes(t *testing.T) {
	errHandler := errors.New("projection unavailable")
	deleted := newEvent(t, identityv1.EventUserDeleted, "u1")
	tenantCreated := newEvent(t, tenantv1.EventTenantCreated, "t1")
	undeclared := deleted
	undeclared.Type = "identity.user.vanished"

	// call is what fn was given.
	type call struct {
		ev      events.Event
		payload proto.Message
	}
	cases := []struct {
		name string
		ev   events.Event
		any  bool  // T is proto.Message (each type's declared payload), else *identityv1.UserDeleted
		fail error // what fn returns
		// want: fn's call (nil: not called) and the handler's error.
		wantPayload     proto.Message
		wantUndecodable bool
		wantErr         error // matched with errors.Is when set
		wantOtherError  bool  // an error that is neither undecodable nor malformed
	}{
		{name: "typed: the payload reaches fn", ev: deleted,
			wantPayload: &identityv1.UserDeleted{AppId: "app1", UserId: "u1"}},
		{name: "any: each type's declared payload reaches fn", ev: tenantCreated, any: true,
			wantPayload: &tenantv1.TenantChanged{AppId: "app1", TenantId: "t1"}},
		{name: "typed: a payload that does not decode never reaches fn", ev: garbled(deleted), wantUndecodable: true},
		{name: "any: a payload that does not decode never reaches fn", ev: garbled(tenantCreated), any: true, wantUndecodable: true},
		{name: "typed: a payload that is no JSON object", ev: func() events.Event { e := deleted; e.Data = json.RawMessage(`[]`); return e }(),
			wantUndecodable: true},
		{name: "a type that declares no payload cannot decode", ev: undeclared, any: true, wantUndecodable: true},
		{name: "typed: a type whose payload is another message is the consumer's defect, retried",
			ev: tenantCreated, wantOtherError: true},
		{name: "fn's failure comes back unchanged", ev: deleted, fail: errHandler,
			wantPayload: &identityv1.UserDeleted{AppId: "app1", UserId: "u1"}, wantErr: errHandler},
		{name: "fn's malformed verdict stays malformed, not undecodable", ev: deleted, fail: events.ErrMalformed,
			wantPayload: &identityv1.UserDeleted{AppId: "app1", UserId: "u1"}, wantErr: events.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *call
			var h events.Handler
			if tc.any {
				h = events.Handle(func(_ context.Context, ev events.Event, m proto.Message) error {
					got = &call{ev, m}
					return tc.fail
				})
			} else {
				h = events.Handle(func(_ context.Context, ev events.Event, m *identityv1.UserDeleted) error {
					got = &call{ev, m}
					return tc.fail
				})
			}
			err := h(context.Background(), tc.ev)

			switch {
			case tc.wantPayload == nil && got != nil:
				t.Fatalf("fn was called with %v", got.payload)
			case tc.wantPayload != nil && got == nil:
				t.Fatal("fn was not called")
			case tc.wantPayload != nil && (!proto.Equal(got.payload, tc.wantPayload) || got.ev.ID != tc.ev.ID):
				t.Fatalf("fn got %T %v of %s, want %T %v of %s", got.payload, got.payload, got.ev.ID, tc.wantPayload, tc.wantPayload, tc.ev.ID)
			}
			undecodable := errors.Is(err, events.ErrUndecodable)
			switch {
			case tc.wantUndecodable:
				if !undecodable || !errors.Is(err, events.ErrMalformed) {
					t.Fatalf("err = %v, want one wrapping ErrUndecodable and ErrMalformed", err)
				}
			case undecodable:
				t.Fatalf("err = %v wraps ErrUndecodable", err)
			case tc.wantOtherError:
				if err == nil || errors.Is(err, events.ErrMalformed) {
					t.Fatalf("err = %v, want a failure that brings the event back", err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}

// TestConsumeAcknowledgesAnUndecodableEventOnceLogsAndCountsIt drives the rule through JetStream:
// the undecodable event is acknowledged on its first delivery, logged at error level with its id
// and type, counted, and the event after it is applied.
func TestConsumeAcknowledgesAnUndecodableEventOnceLogsAndCountsIt(t *testing.T) {
	bus, _ := natstest.New(t)
	ctx := context.Background()
	bad, good := garbled(newEvent(t, identityv1.EventUserDeleted, "u1")), newEvent(t, identityv1.EventUserDeleted, "u2")
	logs := &logLines{}
	var applied atomic.Value
	const durable = "undecodable"
	before := events.Consumed(durable, "undecodable")
	consumer, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: durable, Types: []eventsv1.Type{bad.Type}, Inbox: events.NewMemoryInbox(), Log: logx.New(logs, "info"),
		Handler: events.Handle(func(_ context.Context, _ events.Event, p *identityv1.UserDeleted) error {
			applied.Store(p.GetUserId())
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	publish(t, bus, bad, good)
	eventually(t, "the event after the undecodable one is applied", func() bool { return applied.Load() == "u2" })

	cons, err := bus.JS.Consumer(ctx, bus.Stream("identity"), durable)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "both events are acknowledged", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.AckFloor.Stream == 2 && info.NumAckPending == 0
	})
	if info, err := cons.Info(ctx); err != nil || info.NumRedelivered != 0 {
		t.Fatalf("redelivered: %v, %v; want the undecodable event delivered once", info, err)
	}
	line := logs.find("events: acknowledging an event whose payload does not decode")
	if line == nil || line["level"] != "ERROR" || line["event_id"] != bad.ID || line["event_type"] != string(bad.Type) {
		t.Fatalf("logged %v, want an error line naming %s of type %s", line, bad.ID, bad.Type)
	}
	if got := events.Consumed(durable, "undecodable") - before; got != 1 {
		t.Fatalf("counted %v undecodable events, want 1", got)
	}
}

func TestHandleBatchDecodesEveryPayloadOrNoneReachesTheHandler(t *testing.T) {
	a, b := newEvent(t, identityv1.EventUserDeleted, "u1"), newEvent(t, identityv1.EventUserDeleted, "u2")
	var got []string
	h := events.HandleBatch(func(_ context.Context, evs []events.Event, payloads []*identityv1.UserDeleted) error {
		for i, p := range payloads {
			got = append(got, evs[i].ID+"/"+p.GetUserId())
		}
		return nil
	})
	if err := h(context.Background(), []events.Event{a, b}); err != nil {
		t.Fatal(err)
	}
	if want := []string{a.ID + "/u1", b.ID + "/u2"}; !slices.Equal(got, want) {
		t.Fatalf("handler got %v, want %v", got, want)
	}
	got = nil
	if err := h(context.Background(), []events.Event{a, garbled(b)}); !errors.Is(err, events.ErrUndecodable) {
		t.Fatalf("a batch with a garbled payload: err = %v, want ErrUndecodable", err)
	}
	if got != nil {
		t.Fatalf("the handler ran for a batch with a garbled payload: %v", got)
	}
}
