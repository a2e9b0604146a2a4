package events_test

import (
	"context"
	"slices"
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/natstest"
)

// storedIDs reads the event ids a stream holds, in stream order.
func storedIDs(t *testing.T, bus events.Bus, stream string) []string {
	t.Helper()
	ctx := context.Background()
	s, err := bus.JS.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		msg, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		ev := decodeRaw(t, msg.Data)
		ids = append(ids, ev.ID)
	}
	return ids
}

func TestFlushPublishesEveryPendingEventInOrder(t *testing.T) {
	bus, _ := natstest.New(t)
	out := &events.MemoryOutbox{}
	var want []string
	for range 150 { // more than one batch
		ev := newEvent(t, "identity.user.updated", "u1")
		out.Add(ev)
		want = append(want, ev.ID)
	}
	n, err := events.NewRelay(out, bus, nil).Flush(context.Background())
	if err != nil || n != 150 {
		t.Fatalf("Flush = %d, %v; want 150, nil", n, err)
	}
	if got := storedIDs(t, bus, bus.Stream("identity")); !slices.Equal(got, want) {
		t.Fatalf("stream order differs from outbox order:\n got %v\nwant %v", got, want)
	}
	if pending, _ := out.Pending(context.Background(), 10); len(pending) != 0 {
		t.Fatalf("%d events still pending", len(pending))
	}
}

func TestFlushStopsAtAnEventItCannotPublish(t *testing.T) {
	bus, _ := natstest.New(t)
	out := &events.MemoryOutbox{}
	first, later := newEvent(t, "identity.user.updated", "u1"), newEvent(t, "identity.user.updated", "u3")
	broken := newEvent(t, "identity.user.updated", "u2")
	broken.Type = "nowhere.thing" // MemoryOutbox.Add trusts its caller; Publish does not
	out.Add(first, broken, later)

	n, err := events.NewRelay(out, bus, nil).Flush(context.Background())
	if err == nil || n != 1 {
		t.Fatalf("Flush = %d, %v; want 1 and an error", n, err)
	}
	pending, _ := out.Pending(context.Background(), 10)
	if len(pending) != 2 || pending[0].ID != broken.ID || pending[1].ID != later.ID {
		t.Fatalf("pending = %v; want the broken event and the one after it", pending)
	}
	if got := storedIDs(t, bus, bus.Stream("identity")); !slices.Equal(got, []string{first.ID}) {
		t.Fatalf("stream holds %v; the later event must not overtake the broken one", got)
	}
}

func TestRunPublishesAfterNotifyAndStopsOnCancel(t *testing.T) {
	bus, _ := natstest.New(t)
	out := &events.MemoryOutbox{}
	relay := events.NewRelay(out, bus, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()

	ev := newEvent(t, "tenant.tenant.created", "u1")
	out.Add(ev)
	relay.Notify()
	relay.Notify() // never blocks, even with a wake-up pending
	eventually(t, "the event is in the stream", func() bool { return slices.Contains(storedIDs(t, bus, bus.Stream("tenant")), ev.ID) })

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v on cancel, want nil", err)
	}
}
