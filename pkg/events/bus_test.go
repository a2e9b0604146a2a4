package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// recorder is a Handler that remembers the events it saw, in order.
type recorder struct {
	mu   sync.Mutex
	seen []events.Event
	fail map[string]int // event id -> failures left
}

func (r *recorder) handle(_ context.Context, ev events.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, ev)
	if r.fail[ev.ID] > 0 {
		r.fail[ev.ID]--
		return errors.New("handler failure")
	}
	return nil
}

func (r *recorder) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.seen {
		if ev.ID == id {
			n++
		}
	}
	return n
}

func publish(t *testing.T, bus events.Bus, evs ...events.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := bus.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

func streamMsgs(t *testing.T, bus events.Bus, stream string) uint64 {
	t.Helper()
	s, err := bus.JS.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func TestBusTopology(t *testing.T) {
	tests := []struct {
		prefix, subject, stream string
	}{
		{"", "berth.identity.user.updated", "BERTH_IDENTITY"},
		{"t1", "t1.identity.user.updated", "T1_IDENTITY"},
	}
	for _, tt := range tests {
		b := events.Bus{Prefix: tt.prefix}
		if got := b.Subject(identityv1.EventUserUpdated); got != tt.subject {
			t.Errorf("Subject = %q, want %q", got, tt.subject)
		}
		if got := b.Stream("identity"); got != tt.stream {
			t.Errorf("Stream = %q, want %q", got, tt.stream)
		}
	}
}

func TestEnsureStreamsIsIdempotentAndRejectsBadPrefix(t *testing.T) {
	bus, _ := natstest.New(t)
	ctx := context.Background()
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatalf("second EnsureStreams: %v", err)
	}
	for _, c := range events.Contexts() {
		s, err := bus.JS.Stream(ctx, bus.Stream(c))
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.CachedInfo().Config
		if cfg.Duplicates != 2*time.Minute || cfg.Storage != jetstream.FileStorage || cfg.Subjects[0] != bus.Subject(eventsv1.Type(c+".>")) {
			t.Fatalf("stream config = %+v", cfg)
		}
	}
	bad := events.Bus{JS: bus.JS, Prefix: "a.b"}
	if err := bad.EnsureStreams(ctx); err == nil {
		t.Fatal("prefix with a dot accepted")
	}
}

func TestPublishDropsARepublishedEvent(t *testing.T) {
	bus, _ := natstest.New(t)
	ev := newEvent(t, identityv1.EventUserUpdated, "u1")
	publish(t, bus, ev, ev)
	if n := streamMsgs(t, bus, bus.Stream("identity")); n != 1 {
		t.Fatalf("stream holds %d messages, want 1", n)
	}
	if err := bus.Publish(context.Background(), events.Event{ID: "x", Type: identityv1.EventUserUpdated}); err == nil {
		t.Fatal("event without a UUID published")
	}
}

func TestConsumeAppliesWantedTypesAndTerminatesGarbage(t *testing.T) {
	bus, conn := natstest.New(t)
	ctx := context.Background()
	updated, deleted, created := newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserDeleted, "u2"), newEvent(t, identityv1.EventUserFrozen, "u3")

	// Published before the consumer exists: a new durable starts at the beginning of the stream.
	if err := conn.Publish(bus.Subject(identityv1.EventUserUpdated), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	wrongSubject, _ := json.Marshal(newEvent(t, identityv1.EventUserDeleted, "u4"))
	if _, err := bus.JS.Publish(ctx, bus.Subject(identityv1.EventUserUpdated), wrongSubject); err != nil {
		t.Fatal(err)
	}
	publish(t, bus, created, updated)

	rec := &recorder{}
	consumer, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: "c1",
		Types:   []eventsv1.Type{identityv1.EventUserUpdated, identityv1.EventUserDeleted},
		Inbox:   events.NewMemoryInbox(),
		Handler: rec.handle,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	publish(t, bus, deleted)

	eventually(t, "both wanted events are handled", func() bool { return rec.count(updated.ID) == 1 && rec.count(deleted.ID) == 1 })
	cons, err := bus.JS.Consumer(ctx, bus.Stream("identity"), "c1")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every message is acked or terminated", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) != 2 {
		t.Fatalf("handler saw %d events, want only the 2 wanted ones: %+v", len(rec.seen), rec.seen)
	}
}

func TestConsumeRedeliversAfterAHandlerFailure(t *testing.T) {
	bus, _ := natstest.New(t)
	ev := newEvent(t, tenantv1.EventTenantCreated, "u1")
	rec := &recorder{fail: map[string]int{ev.ID: 1}}
	consumer, err := bus.Consume(context.Background(), events.ConsumerConfig{
		Durable: "c1", Types: []eventsv1.Type{ev.Type}, Inbox: events.NewMemoryInbox(), Handler: rec.handle,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	publish(t, bus, ev)
	eventually(t, "the event is handled again after its failure", func() bool { return rec.count(ev.ID) == 2 })
}

func TestConsumeAcknowledgesAMalformedEventWithoutRedelivery(t *testing.T) {
	bus, _ := natstest.New(t)
	ctx := context.Background()
	ev := newEvent(t, identityv1.EventUserDeleted, "u1")
	var calls atomic.Int32
	consumer, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: "c1", Types: []eventsv1.Type{ev.Type}, Inbox: events.NewMemoryInbox(),
		Handler: func(context.Context, events.Event) error {
			calls.Add(1)
			return fmt.Errorf("payload lacks the tenant: %w", events.ErrMalformed)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	publish(t, bus, ev)
	cons, err := bus.JS.Consumer(ctx, bus.Stream("identity"), "c1")
	if err != nil {
		t.Fatal(err)
	}
	// Only an ack moves the ack floor past the event: a nak (what any other handler error gets)
	// leaves it pending and brings it back.
	eventually(t, "the event is acknowledged", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.AckFloor.Stream == 1 && info.NumAckPending == 0
	})
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumRedelivered != 0 || info.NumPending != 0 || calls.Load() != 1 {
		t.Fatalf("redelivered %d, pending %d, handler called %d times; want 0, 0, once", info.NumRedelivered, info.NumPending, calls.Load())
	}
}

func TestConsumeStopsWhenAsked(t *testing.T) {
	bus, _ := natstest.New(t)
	first, second := newEvent(t, tenantv1.EventTenantUpdated, "u1"), newEvent(t, tenantv1.EventTenantUpdated, "u2")
	rec := &recorder{}
	consumer, err := bus.Consume(context.Background(), events.ConsumerConfig{
		Durable: "c1", Types: []eventsv1.Type{first.Type}, Inbox: events.NewMemoryInbox(), Handler: rec.handle,
	})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, bus, first)
	eventually(t, "the first event is handled", func() bool { return rec.count(first.ID) == 1 })
	consumer.Stop()
	consumer.Stop() // idempotent
	publish(t, bus, second)
	// The durable keeps the event for the next process; this one must not have taken it.
	cons, err := bus.JS.Consumer(context.Background(), bus.Stream("tenant"), "c1")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.NumPending != 1 || rec.count(second.ID) != 0 {
		t.Fatalf("after stop: %d pending, handler saw the second event %d times; want 1 and 0", info.NumPending, rec.count(second.ID))
	}
}

func TestConsumePurgesInboxRecordsOlderThanAWeek(t *testing.T) {
	bus, _ := natstest.New(t)
	in := events.NewMemoryInbox()
	now := time.Now()
	for _, age := range []time.Duration{30 * 24 * time.Hour, 8 * 24 * time.Hour, 6 * 24 * time.Hour, time.Hour} {
		events.SetMemoryInboxClock(in, func() time.Time { return now.Add(-age) })
		if _, err := in.Once(context.Background(), "c1", uuid.NewString(), func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	consumer, err := bus.Consume(context.Background(), events.ConsumerConfig{
		Durable: "c1", Types: []eventsv1.Type{tenantv1.EventTenantUpdated}, Inbox: in, Handler: (&recorder{}).handle,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	// Consume purges when it starts; a purge that went too far would pass below 2.
	eventually(t, "the old records are purged", func() bool { return events.MemoryInboxLen(in) <= 2 })
	if n := events.MemoryInboxLen(in); n != 2 {
		t.Fatalf("inbox keeps %d records, want the 2 younger than a week", n)
	}
}

func TestConsumeRejectsBadConfig(t *testing.T) {
	bus := events.Bus{} // validation comes before any server call
	ok := events.ConsumerConfig{Durable: "c1", Types: []eventsv1.Type{identityv1.EventUserUpdated}, Inbox: events.NewMemoryInbox(),
		Handler: func(context.Context, events.Event) error { return nil }}
	tests := []struct {
		name    string
		change  func(*events.ConsumerConfig)
		wantErr string
	}{
		{"no durable", func(c *events.ConsumerConfig) { c.Durable = "" }, "durable"},
		{"durable with a dot", func(c *events.ConsumerConfig) { c.Durable = "a.b" }, "durable"},
		{"no inbox", func(c *events.ConsumerConfig) { c.Inbox = nil }, "Inbox"},
		{"no handler", func(c *events.ConsumerConfig) { c.Handler = nil }, "Handler"},
		{"no types", func(c *events.ConsumerConfig) { c.Types = nil }, "no event types"},
		{"types of two contexts", func(c *events.ConsumerConfig) {
			c.Types = []eventsv1.Type{identityv1.EventUserUpdated, tenantv1.EventTenantCreated}
		}, "several contexts"},
		{"unknown context", func(c *events.ConsumerConfig) { c.Types = []eventsv1.Type{"shipping.parcel.sent"} }, "unknown context"},
		{"undeclared type", func(c *events.ConsumerConfig) { c.Types = []eventsv1.Type{identityv1.EventUserUpdated + "_twice"} }, "no payload message declares"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.change(&cfg)
			_, err := bus.Consume(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestSubscribeDeliversNewEventsOfEveryContext(t *testing.T) {
	bus, conn := natstest.New(t)
	old := newEvent(t, identityv1.EventUserUpdated, "u0")
	publish(t, bus, old)

	var mu sync.Mutex
	var got []string
	stop, err := bus.Subscribe(context.Background(), []eventsv1.Type{identityv1.EventUserUpdated, tenantv1.EventTenantUpdated}, func(ev events.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := conn.Publish(bus.Subject(identityv1.EventUserUpdated), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	unwanted, ident, ten := newEvent(t, tenantv1.EventTenantCreated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, tenantv1.EventTenantUpdated, "u2")
	publish(t, bus, unwanted, ident, ten)
	eventually(t, "both new events arrive", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	// The identity stream is ordered: had the old event been delivered, it would have come first.
	if len(got) != 2 || !((got[0] == ident.ID && got[1] == ten.ID) || (got[0] == ten.ID && got[1] == ident.ID)) {
		t.Fatalf("got %v, want exactly [%s %s] in some order", got, ident.ID, ten.ID)
	}
}

// rawPublish stores ev under a Nats-Msg-Id of its own, as a redelivery that dedup cannot catch.
func rawPublish(t *testing.T, bus events.Bus, ev events.Event) {
	t.Helper()
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.JS.PublishMsg(context.Background(), &nats.Msg{Subject: bus.Subject(ev.Type), Data: body}, jetstream.WithMsgID(uuid.NewString())); err != nil {
		t.Fatal(err)
	}
}

func TestAConsumerWhoseDurableIsDeletedFailsItsCheckAndReportsItselfLost(t *testing.T) {
	bus, _ := natstest.New(t)
	ctx := context.Background()
	consumer, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: "c1", Types: []eventsv1.Type{tenantv1.EventTenantCreated}, Inbox: events.NewMemoryInbox(), Handler: (&recorder{}).handle,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	if err := consumer.Check(ctx); err != nil {
		t.Fatalf("Check of a running consumer = %v", err)
	}
	if err := bus.JS.DeleteConsumer(ctx, bus.Stream("tenant"), "c1"); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Check(ctx); err == nil {
		t.Fatal("Check passed after the durable was deleted")
	}
	select {
	case <-consumer.Lost():
	case <-time.After(20 * time.Second): // a bound on a hang; the pull loop notices within heartbeats
		t.Fatal("the consumer never reported itself lost")
	}
}

func TestReplicasEnsuringTheStreamsTogetherAllSucceed(t *testing.T) {
	base, _ := natstest.New(t)
	ctx := context.Background()
	for round := range 5 {
		// A prefix of its own per round, so every round races to create streams that do not exist.
		bus := events.Bus{JS: base.JS, Prefix: fmt.Sprintf("%sr%d", base.Prefix, round)}
		t.Cleanup(func() {
			for _, name := range bus.Streams() {
				_ = base.JS.DeleteStream(context.Background(), name)
			}
		})
		errs := make(chan error, 6)
		var wg sync.WaitGroup
		for range cap(errs) {
			wg.Go(func() { errs <- bus.EnsureStreams(ctx) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: a replica's EnsureStreams: %v", round, err)
			}
		}
	}
}
