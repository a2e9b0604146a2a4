package events_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// crashAfterPublish is an outbox whose first MarkPublished fails, as if the relay died after
// JetStream stored the events but before the outbox recorded it.
type crashAfterPublish struct {
	events.OutboxSource
	crashed atomic.Bool
}

func (c *crashAfterPublish) MarkPublished(ctx context.Context, ids []string) error {
	if c.crashed.CompareAndSwap(false, true) {
		return errors.New("relay crashed before marking")
	}
	return c.OutboxSource.MarkPublished(ctx, ids)
}

// createAccount is a service's state change: the account row and its event in one transaction.
func createAccount(t *testing.T, pool *pgxpool.Pool, id string) events.Event {
	t.Helper()
	ev := newEvent(t, identityv1.EventUserUpdated, id)
	err := pgxx.InTx(context.Background(), pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into account (id) values ($1)", id); err != nil {
			return err
		}
		return events.InsertOutbox(ctx, tx, ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestDeliveryAppliesEachEventExactlyOnce follows an event from the state change that wrote it to the
// effect of a durable consumer with a Postgres inbox, through a relay crash and a redelivery.
func TestDeliveryAppliesEachEventExactlyOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	bus, _ := natstest.New(t)
	const consumer = "account-projection"

	c, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: consumer,
		Types:   []eventsv1.Type{identityv1.EventUserUpdated},
		Inbox:   events.NewPGInbox(pool),
		Handler: func(ctx context.Context, ev events.Event) error {
			// Runs in the inbox transaction: pgxx.Q returns it.
			_, err := pgxx.Q(ctx, pool).Exec(ctx, "insert into effect (consumer, event_id) values ($1, $2)", consumer, ev.ID)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()

	src := &crashAfterPublish{OutboxSource: events.NewPGOutbox(pool)}
	relay := events.NewRelay("test", src, bus, nil)
	ev := createAccount(t, pool, "a1")

	// The first pass publishes, then "crashes" before marking; the second republishes the event.
	if _, err := relay.Flush(ctx); err == nil {
		t.Fatal("first Flush hid the MarkPublished failure")
	}
	if n, err := relay.Flush(ctx); err != nil || n != 1 {
		t.Fatalf("second Flush = %d, %v; want the event republished", n, err)
	}
	if n, err := relay.Flush(ctx); err != nil || n != 0 {
		t.Fatalf("third Flush = %d, %v; want nothing left", n, err)
	}

	// (1) Delivery within a bounded wait.
	eventually(t, "the consumer applied the event", func() bool { return countEffects(t, pool, ev.ID) == 1 })

	// (2) The republished copy was dropped by JetStream's duplicate window.
	if n := streamMsgs(t, bus, bus.Stream("identity")); n != 1 {
		t.Fatalf("stream holds %d messages after the republish, want 1", n)
	}

	// (3) A copy that bypasses dedup reaches the consumer, which must not apply it again. A marker
	// event published after it shows when the copy has been processed: one durable consumer handles
	// its messages in stream order.
	rawPublish(t, bus, ev)
	marker := createAccount(t, pool, "a2")
	if n, err := relay.Flush(ctx); err != nil || n != 1 {
		t.Fatalf("Flush of the marker = %d, %v", n, err)
	}
	eventually(t, "the marker event is applied", func() bool { return countEffects(t, pool, marker.ID) == 1 })
	if n := streamMsgs(t, bus, bus.Stream("identity")); n != 3 {
		t.Fatalf("stream holds %d messages, want 3 (event, its copy, marker)", n)
	}
	cons, err := bus.JS.Consumer(ctx, bus.Stream("identity"), consumer)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every message is acknowledged", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.AckFloor.Stream == 3 && info.NumAckPending == 0
	})
	if n := countEffects(t, pool, ev.ID); n != 1 {
		t.Fatalf("the redelivered event was applied %d times, want once", n)
	}
}
