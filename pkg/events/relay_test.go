package events_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
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
		ev := newEvent(t, identityv1.EventUserUpdated, "u1")
		out.Add(context.Background(), ev)
		want = append(want, ev.ID)
	}
	n, err := events.NewRelay("test", out, bus, nil).Flush(context.Background())
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
	first, later := newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u3")
	broken := newEvent(t, identityv1.EventUserUpdated, "u2")
	broken.Type = "nowhere.thing" // MemoryOutbox.Add trusts its caller; Publish does not
	out.Add(context.Background(), first, broken, later)

	n, err := events.NewRelay("test", out, bus, nil).Flush(context.Background())
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

func TestRunPublishesWhenTheOutboxWakesItAndStopsOnCancel(t *testing.T) {
	bus, _ := natstest.New(t)
	out := &events.MemoryOutbox{}
	relay := events.NewRelay("test", out, bus, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()

	ev := newEvent(t, tenantv1.EventTenantCreated, "u1")
	out.Add(context.Background(), ev)
	eventually(t, "the event is in the stream", func() bool { return slices.Contains(storedIDs(t, bus, bus.Stream("tenant")), ev.ID) })

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v on cancel, want nil", err)
	}
}

// runRelay runs relay until the test ends.
func runRelay(t *testing.T, relay *events.Relay) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v on cancel, want nil", err)
		}
	})
}

func TestRunPurgesEventsPublishedLongerAgoThanTheRetention(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention time.Duration // 0 keeps the default
		ages      []time.Duration
		kept      int
	}{
		{"default retention of a day", 0, []time.Duration{48 * time.Hour, 25 * time.Hour, 23 * time.Hour, time.Minute}, 2},
		{"retention set to half an hour", 30 * time.Minute, []time.Duration{48 * time.Hour, time.Hour, 10 * time.Minute}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus, _ := natstest.New(t)
			out := &events.MemoryOutbox{}
			now := time.Now()
			for _, age := range tc.ages {
				ev := newEvent(t, identityv1.EventUserUpdated, "u1")
				out.Add(context.Background(), ev)
				out.SetClock(func() time.Time { return now.Add(-age) })
				if err := out.MarkPublished(context.Background(), []string{ev.ID}); err != nil {
					t.Fatal(err)
				}
			}
			relay := events.NewRelay("test", out, bus, nil)
			if tc.retention != 0 {
				if err := relay.SetRetention(tc.retention); err != nil {
					t.Fatal(err)
				}
			}
			runRelay(t, relay)
			// Run purges when it starts; a purge that went too far would pass below tc.kept.
			eventually(t, "the old events are purged", func() bool { return out.PublishedLen() <= tc.kept })
			if n := out.PublishedLen(); n != tc.kept {
				t.Fatalf("%d published events kept, want %d", n, tc.kept)
			}
		})
	}
}

func TestSetRetentionRejectsNonPositiveDurations(t *testing.T) {
	relay := events.NewRelay("test", &events.MemoryOutbox{}, events.Bus{}, nil)
	for _, d := range []time.Duration{0, -time.Hour} {
		if err := relay.SetRetention(d); err == nil {
			t.Errorf("SetRetention(%s) succeeded", d)
		}
	}
}

// purgeFails is an outbox whose Purge always fails, as when the database refuses the delete.
type purgeFails struct{ events.OutboxSource }

func (purgeFails) Purge(context.Context, time.Time) (int, error) {
	return 0, errors.New("purge refused")
}

func TestRunKeepsPublishingWhenPurgeFails(t *testing.T) {
	bus, _ := natstest.New(t)
	out := &events.MemoryOutbox{}
	relay := events.NewRelay("test", purgeFails{out}, bus, nil)
	runRelay(t, relay)
	ev := newEvent(t, tenantv1.EventTenantCreated, "u1")
	out.Add(context.Background(), ev) // purgeFails hides the outbox's wake-ups: the relay's poll finds it
	eventually(t, "the event is in the stream", func() bool { return slices.Contains(storedIDs(t, bus, bus.Stream("tenant")), ev.ID) })
}

func TestRelayWaitGrowsOnlyWhileAWakingSourceIsEmptyOrAPassFails(t *testing.T) {
	failed := errors.New("nats down")
	for _, tc := range []struct {
		name  string
		prev  time.Duration
		n     int
		err   error
		wakes bool
		want  time.Duration
	}{
		{"idle waking source doubles the poll", 200 * time.Millisecond, 0, nil, true, 400 * time.Millisecond},
		{"idle waking source stops at the idle cap", 4 * time.Second, 0, nil, true, 5 * time.Second},
		{"events published: poll soon again", 5 * time.Second, 3, nil, true, 200 * time.Millisecond},
		{"source without wake-ups keeps polling", 200 * time.Millisecond, 0, nil, false, 200 * time.Millisecond},
		{"failure backs off", 400 * time.Millisecond, 0, failed, true, 800 * time.Millisecond},
		{"failure backs off to its cap", 4 * time.Second, 1, failed, false, 5 * time.Second},
		{"success after failures polls again", 5 * time.Second, 0, nil, false, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := events.NextWait(tc.prev, tc.n, tc.err, tc.wakes); got != tc.want {
				t.Fatalf("NextWait(%s, %d, %v, %t) = %s, want %s", tc.prev, tc.n, tc.err, tc.wakes, got, tc.want)
			}
		})
	}
}

// silentWaker claims to wake its relay but never does, as a listener whose connection died
// without an error.
type silentWaker struct{ *events.MemoryOutbox }

func (silentWaker) Wakeups(context.Context) <-chan struct{} { return make(chan struct{}) }

func TestAnIdleRelayStillFindsEventsWhoseWakeUpWasLost(t *testing.T) {
	bus, _ := natstest.New(t)
	out := &events.MemoryOutbox{}
	runRelay(t, events.NewRelay("test", silentWaker{out}, bus, nil))
	time.Sleep(time.Second) // long enough for the idle poll to have grown past relayPoll
	ev := newEvent(t, tenantv1.EventTenantCreated, "u1")
	out.Add(context.Background(), ev)
	eventually(t, "the event is in the stream", func() bool { return slices.Contains(storedIDs(t, bus, bus.Stream("tenant")), ev.ID) })
}
