package events_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// recordEffect writes the consumer's effect for id in the inbox transaction ctx carries.
func recordEffect(ctx context.Context, pool *pgxpool.Pool, id string) error {
	_, err := pgxx.Q(ctx, pool).Exec(ctx, "insert into effect (consumer, event_id) values ('c1', $1)", id)
	return err
}

func TestAPGInboxBatchRecordsEveryEventWithItsEffectOrNone(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	in := events.NewPGInbox(pool).(events.BatchInbox)
	errBoom := errors.New("boom")
	before, a, b, c := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	process(t, in, "c1", before)

	// The effects of the first two are written, then the batch fails: they roll back with it.
	_, err := in.OnceEach(ctx, "c1", []string{a, b, c}, func(ctx context.Context, _ []int) error {
		for _, id := range []string{a, b} {
			if err := recordEffect(ctx, pool, id); err != nil {
				return err
			}
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("err = %v, want boom", err)
	}
	for _, id := range []string{a, b} {
		if n := countEffects(t, pool, id); n != 0 {
			t.Fatalf("%d effects of %s survived the failed batch, want 0", n, id)
		}
	}

	// Again, with one recorded before and one given twice: those run no second time, the rest in order.
	ids := []string{a, before, b, a, c}
	var ran []int
	applied, err := in.OnceEach(ctx, "c1", ids, func(ctx context.Context, fresh []int) error {
		ran = fresh
		for _, i := range fresh {
			if err := recordEffect(ctx, pool, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, true, false, true}; !slices.Equal(applied, want) {
		t.Fatalf("applied = %v, want %v", applied, want)
	}
	if want := []int{0, 2, 4}; !slices.Equal(ran, want) {
		t.Fatalf("fn ran for %v, want %v", ran, want)
	}
	if _, err := in.OnceEach(ctx, "c1", []string{c, a}, func(context.Context, []int) error {
		t.Fatal("fn ran for a batch recorded before")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a, b, c} {
		if n := countEffects(t, pool, id); n != 1 {
			t.Fatalf("%d effects of %s, want 1", n, id)
		}
		if ok, err := in.Once(ctx, "c1", id, func(context.Context) error { return nil }); err != nil || ok {
			t.Fatalf("a single redelivery of %s after its batch = %v, %v; want not applied", id, ok, err)
		}
	}
}

// Replicas may hold overlapping batches in different orders (a redelivery beside the first
// delivery): they must neither deadlock nor apply an event twice.
func TestOverlappingPGInboxBatchesInReverseOrderApplyEachEventOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	in := events.NewPGInbox(pool).(events.BatchInbox)
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	var wg sync.WaitGroup
	for w := range 6 {
		batch := slices.Clone(ids)
		if w%2 == 1 {
			slices.Reverse(batch)
		}
		wg.Go(func() {
			if _, err := in.OnceEach(ctx, "c1", batch, func(ctx context.Context, fresh []int) error {
				for _, i := range fresh {
					if err := recordEffect(ctx, pool, batch[i]); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Errorf("batch %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if n := countEffects(t, pool, id); n != 1 {
			t.Fatalf("%d effects of %s, want 1", n, id)
		}
	}
}

// A consumer with Batch applies the events waiting for it in shared transactions, with its
// Handler per event or its BatchHandler per batch, and one failing or malformed event neither
// holds back the others nor is applied twice.
func TestABatchingConsumerAppliesWaitingEventsTogetherEachOnce(t *testing.T) {
	for _, withBatchHandler := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch handler %v", withBatchHandler), func(t *testing.T) {
			testBatchingConsumer(t, withBatchHandler)
		})
	}
}

func testBatchingConsumer(t *testing.T, withBatchHandler bool) {
	ctx := context.Background()
	pool := pgPool(t)
	bus, _ := natstest.New(t)
	var evs []events.Event
	for i := range 120 {
		evs = append(evs, newEvent(t, identityv1.EventUserUpdated, fmt.Sprintf("u%d", i)))
	}
	failing, malformed := evs[30].ID, evs[70].ID
	publish(t, bus, evs...) // waiting before the consumer starts

	var (
		mu       sync.Mutex
		failures = 1
		txs      = map[int64]bool{}
		batches  int
	)
	handle := func(ctx context.Context, ev events.Event) error {
		switch {
		case ev.ID == failing && failures > 0:
			failures--
			return errors.New("a dependency is down")
		case ev.ID == malformed:
			return fmt.Errorf("payload lacks the user: %w", events.ErrMalformed)
		}
		var tx int64
		if err := pgxx.Q(ctx, pool).QueryRow(ctx, "select txid_current()").Scan(&tx); err != nil {
			return err
		}
		txs[tx] = true
		return recordEffect(ctx, pool, ev.ID)
	}
	cfg := events.ConsumerConfig{
		Durable: "c1", Types: []eventsv1.Type{identityv1.EventUserUpdated}, Inbox: events.NewPGInbox(pool), Batch: 50,
		Handler: func(ctx context.Context, ev events.Event) error {
			mu.Lock()
			defer mu.Unlock()
			return handle(ctx, ev)
		},
	}
	if withBatchHandler {
		cfg.BatchHandler = func(ctx context.Context, batch []events.Event) error {
			mu.Lock()
			defer mu.Unlock()
			batches++
			for _, ev := range batch {
				if err := handle(ctx, ev); err != nil {
					return err
				}
			}
			return nil
		}
	}
	consumer, err := bus.Consume(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()

	eventually(t, "every event but the malformed one is applied", func() bool {
		for _, ev := range evs {
			if ev.ID != malformed && countEffects(t, pool, ev.ID) == 0 {
				return false
			}
		}
		return true
	})
	cons, err := bus.JS.Consumer(ctx, bus.Stream("identity"), "c1")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every message is acknowledged", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	for _, ev := range evs {
		want := 1
		if ev.ID == malformed {
			want = 0
		}
		if n := countEffects(t, pool, ev.ID); n != want {
			t.Fatalf("%d effects of %s, want %d", n, ev.ID, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// 119 effects; applied one per transaction they would take 119. The failing and the malformed
	// event each cost their batch a transaction or two more.
	if len(txs) > 119/4 {
		t.Fatalf("119 events were applied in %d transactions; the waiting ones were not batched", len(txs))
	}
	if withBatchHandler && batches == 0 {
		t.Fatal("the batch handler was never called")
	}
	t.Logf("119 events applied in %d transactions, %d batch handler calls", len(txs), batches)
}

// What a handler hands to AfterApply runs once its effect is visible to everyone, and not at all
// when the effect rolls back.
func TestAfterApplyRunsOnceTheEffectIsCommittedAndNeverForAFailure(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	in := events.NewPGInbox(pool).(events.BatchInbox)
	seen := func(id string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			if err := recordEffect(ctx, pool, id); err != nil {
				return err
			}
			events.AfterApply(ctx, func() {
				// Outside the transaction: only a committed effect is visible here.
				if n := countEffects(t, pool, id); n != 1 {
					t.Errorf("after applying %s the pool sees %d effects, want 1", id, n)
				}
			})
			return nil
		}
	}
	ran := 0
	count := func() { ran++ }

	id := uuid.NewString()
	if _, err := in.Once(ctx, "c1", id, func(ctx context.Context) error {
		events.AfterApply(ctx, count)
		return seen(id)(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	ids := []string{uuid.NewString(), uuid.NewString()}
	if _, err := in.OnceEach(ctx, "c1", ids, func(ctx context.Context, fresh []int) error {
		events.AfterApply(ctx, count)
		for _, i := range fresh {
			if err := seen(ids[i])(ctx); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Once(ctx, "c1", uuid.NewString(), func(ctx context.Context) error {
		events.AfterApply(ctx, func() { t.Error("ran after a failed transaction") })
		return errors.New("boom")
	}); err == nil {
		t.Fatal("the failing handler's error was lost")
	}
	if _, err := events.NewMemoryInbox().Once(ctx, "c1", uuid.NewString(), func(ctx context.Context) error {
		events.AfterApply(ctx, count)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	events.AfterApply(ctx, count) // no inbox transaction: at once
	if ran != 4 {
		t.Fatalf("the functions ran %d times, want 4", ran)
	}
}
