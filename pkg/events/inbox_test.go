package events_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
)

// inboxUnderTest is an Inbox and a way to record an event in it as processed at a chosen time, so
// purges can be tested without waiting.
type inboxUnderTest struct {
	in        events.Inbox
	processAt func(t *testing.T, at time.Time, consumer, eventID string)
}

// runInboxSuite is what consumers rely on from every Inbox.
func runInboxSuite(t *testing.T, openUnderTest func(t *testing.T) inboxUnderTest) {
	open := func(t *testing.T) events.Inbox { return openUnderTest(t).in }
	ctx := context.Background()
	errBoom := errors.New("boom")
	once := func(t *testing.T, in events.Inbox, consumer, id string, fn func(context.Context) error) bool {
		t.Helper()
		applied, err := in.Once(ctx, consumer, id, fn)
		if err != nil {
			t.Fatal(err)
		}
		return applied
	}

	t.Run("an event is applied once per consumer", func(t *testing.T) {
		in, id := open(t), uuid.NewString()
		var runs int
		fn := func(context.Context) error { runs++; return nil }
		if !once(t, in, "c1", id, fn) {
			t.Fatal("first delivery not applied")
		}
		if once(t, in, "c1", id, fn) {
			t.Fatal("redelivery applied again")
		}
		if !once(t, in, "c2", id, fn) {
			t.Fatal("another consumer did not apply the event")
		}
		if runs != 2 {
			t.Fatalf("fn ran %d times, want 2", runs)
		}
	})
	t.Run("a failed attempt is not recorded", func(t *testing.T) {
		in, id := open(t), uuid.NewString()
		applied, err := in.Once(ctx, "c1", id, func(context.Context) error { return errBoom })
		if !errors.Is(err, errBoom) || applied {
			t.Fatalf("Once = %v, %v; want false, boom", applied, err)
		}
		if !once(t, in, "c1", id, func(context.Context) error { return nil }) {
			t.Fatal("retry after a failure not applied")
		}
	})
	t.Run("concurrent deliveries apply once", func(t *testing.T) {
		in, id := open(t), uuid.NewString()
		var runs, applied atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := in.Once(ctx, "c1", id, func(context.Context) error { runs.Add(1); return nil })
				if err != nil {
					t.Error(err)
				}
				if ok {
					applied.Add(1)
				}
			})
		}
		wg.Wait()
		if runs.Load() != 1 || applied.Load() != 1 {
			t.Fatalf("fn ran %d times, %d reported applied; want 1 and 1", runs.Load(), applied.Load())
		}
	})
	t.Run("purge forgets only events processed before the cut-off", func(t *testing.T) {
		u := openUnderTest(t)
		purger, ok := u.in.(events.InboxPurger)
		if !ok {
			t.Fatalf("%T is not an InboxPurger", u.in)
		}
		cut := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
		oldID, keptID := uuid.NewString(), uuid.NewString()
		u.processAt(t, cut.Add(-8*24*time.Hour), "c1", oldID)
		u.processAt(t, cut.Add(-time.Second), "c2", oldID)
		u.processAt(t, cut, "c1", keptID)
		u.processAt(t, cut.Add(time.Hour), "c2", keptID)

		if n, err := purger.Purge(ctx, cut); err != nil || n != 2 {
			t.Fatalf("Purge = %d, %v; want 2, nil", n, err)
		}
		if n, err := purger.Purge(ctx, cut); err != nil || n != 0 {
			t.Fatalf("second Purge = %d, %v; want 0, nil", n, err)
		}
		noop := func(context.Context) error { return nil }
		for _, tc := range []struct {
			consumer, id string
			forgotten    bool
		}{
			{"c1", oldID, true},
			{"c2", oldID, true},
			{"c1", keptID, false},
			{"c2", keptID, false},
		} {
			if applied := once(t, u.in, tc.consumer, tc.id, noop); applied != tc.forgotten {
				t.Errorf("%s/%s applied = %v after the purge, want %v", tc.consumer, tc.id, applied, tc.forgotten)
			}
		}
	})
}

// process records eventID for consumer in in, failing t unless it is applied.
func process(t *testing.T, in events.Inbox, consumer, eventID string) {
	t.Helper()
	applied, err := in.Once(context.Background(), consumer, eventID, func(context.Context) error { return nil })
	if err != nil || !applied {
		t.Fatalf("Once(%s, %s) = %v, %v; want applied", consumer, eventID, applied, err)
	}
}

func TestMemoryInbox(t *testing.T) {
	runInboxSuite(t, func(*testing.T) inboxUnderTest {
		in := events.NewMemoryInbox()
		return inboxUnderTest{in: in, processAt: func(t *testing.T, at time.Time, consumer, eventID string) {
			t.Helper()
			events.SetMemoryInboxClock(in, func() time.Time { return at })
			process(t, in, consumer, eventID)
		}}
	})
}

func TestPGInbox(t *testing.T) {
	runInboxSuite(t, func(t *testing.T) inboxUnderTest {
		pool := pgPool(t)
		in := events.NewPGInbox(pool)
		return inboxUnderTest{in: in, processAt: func(t *testing.T, at time.Time, consumer, eventID string) {
			t.Helper()
			process(t, in, consumer, eventID)
			// The row carries the database's now(); move it to the time the test wants.
			if _, err := pool.Exec(context.Background(), `update inbox set processed_at = $1 where consumer = $2 and event_id = $3`,
				at, consumer, eventID); err != nil {
				t.Fatal(err)
			}
		}}
	})
}

func TestPGInboxCommitsTheEffectWithTheRecord(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	in := events.NewPGInbox(pool)
	id := uuid.NewString()
	errBoom := errors.New("boom")
	// Store code joins the inbox transaction through the ctx, with pgxx.Q or pgxx.InTx.
	effect := func(fail error) func(context.Context) error {
		return func(ctx context.Context) error {
			if _, err := pgxx.Q(ctx, pool).Exec(ctx, "insert into effect (consumer, event_id) values ('c1', $1)", id); err != nil {
				return err
			}
			return pgxx.InTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, "insert into effect (consumer, event_id) values ('c1', $1)", id)
				if err != nil {
					return err
				}
				return fail
			})
		}
	}

	if _, err := in.Once(ctx, "c1", id, effect(errBoom)); !errors.Is(err, errBoom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if n := countEffects(t, pool, id); n != 0 {
		t.Fatalf("%d effect rows survived the failed attempt, want 0", n)
	}
	applied, err := in.Once(ctx, "c1", id, effect(nil))
	if err != nil || !applied {
		t.Fatalf("retry = %v, %v; want applied (the failed attempt left no inbox row)", applied, err)
	}
	if n := countEffects(t, pool, id); n != 2 {
		t.Fatalf("%d effect rows, want the 2 written by the successful attempt", n)
	}
}
