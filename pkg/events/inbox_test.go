package events_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
)

// runInboxSuite is what consumers rely on from every Inbox.
func runInboxSuite(t *testing.T, open func(t *testing.T) events.Inbox) {
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
}

func TestMemoryInbox(t *testing.T) {
	runInboxSuite(t, func(*testing.T) events.Inbox { return events.NewMemoryInbox() })
}

func TestPGInbox(t *testing.T) {
	runInboxSuite(t, func(t *testing.T) events.Inbox { return events.NewPGInbox(pgPool(t)) })
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
