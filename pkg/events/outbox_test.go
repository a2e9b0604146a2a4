package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// outboxUnderTest is an OutboxSource and the way its store writes events: add commits events
// together, as one state change would. publishAt marks events published as MarkPublished does, but
// at the given time, so purges can be tested without waiting.
type outboxUnderTest struct {
	src       events.OutboxSource
	add       func(t *testing.T, evs ...events.Event)
	publishAt func(t *testing.T, at time.Time, ids ...string)
}

// runOutboxSuite is what the relay relies on from every OutboxSource.
func runOutboxSuite(t *testing.T, open func(t *testing.T) outboxUnderTest) {
	ctx := context.Background()
	ids := func(evs []events.Event) []string {
		out := make([]string, len(evs))
		for i, ev := range evs {
			out[i] = ev.ID
		}
		return out
	}
	pending := func(t *testing.T, o outboxUnderTest, limit int) []events.Event {
		t.Helper()
		evs, err := o.src.Pending(ctx, limit)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	sameIDs := func(t *testing.T, got []events.Event, want ...events.Event) {
		t.Helper()
		if g, w := ids(got), ids(want); !slices.Equal(g, w) {
			t.Fatalf("pending %v, want %v", g, w)
		}
	}

	t.Run("empty outbox has nothing pending", func(t *testing.T) {
		sameIDs(t, pending(t, open(t), 10))
	})
	t.Run("pending is oldest first and bounded by limit", func(t *testing.T) {
		o := open(t)
		e1, e2, e3 := newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u2"), newEvent(t, tenantv1.EventTenantCreated, "u3")
		o.add(t, e1)
		o.add(t, e2, e3) // written together, kept in the order given
		sameIDs(t, pending(t, o, 2), e1, e2)
		sameIDs(t, pending(t, o, 10), e1, e2, e3)
	})
	t.Run("published events are no longer pending", func(t *testing.T) {
		o := open(t)
		e1, e2, e3 := newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u2"), newEvent(t, identityv1.EventUserUpdated, "u3")
		o.add(t, e1, e2, e3)
		if err := o.src.MarkPublished(ctx, []string{e1.ID, e3.ID}); err != nil {
			t.Fatal(err)
		}
		sameIDs(t, pending(t, o, 10), e2)
		// Marking twice, or an id the outbox never held, is what a relay does after a crash.
		if err := o.src.MarkPublished(ctx, []string{e1.ID, uuid.NewString()}); err != nil {
			t.Fatal(err)
		}
		sameIDs(t, pending(t, o, 10), e2)
	})
	t.Run("events read back equal to what was written", func(t *testing.T) {
		o := open(t)
		want := newEvent(t, identityv1.EventUserUpdated, "u1")
		o.add(t, want)
		got := pending(t, o, 1)
		if len(got) != 1 {
			t.Fatalf("pending %d events, want 1", len(got))
		}
		g := got[0]
		if g.ID != want.ID || g.Type != want.Type || g.Source != want.Source || g.AppID != want.AppID || !g.Time.Equal(want.Time) {
			t.Fatalf("read %+v, want %+v", g, want)
		}
		if !sameJSON(t, g.Data, want.Data) {
			t.Fatalf("data %s, want %s", g.Data, want.Data)
		}
	})
	t.Run("purge deletes only events published before the cut-off", func(t *testing.T) {
		o := open(t)
		cut := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
		old1, old2 := newEvent(t, identityv1.EventUserUpdated, "u1"), newEvent(t, identityv1.EventUserUpdated, "u2")
		atCut, recent := newEvent(t, identityv1.EventUserUpdated, "u3"), newEvent(t, identityv1.EventUserUpdated, "u4")
		unpublished := newEvent(t, identityv1.EventUserUpdated, "u5")
		o.add(t, old1, old2, atCut, recent, unpublished)
		o.publishAt(t, cut.Add(-48*time.Hour), old1.ID)
		o.publishAt(t, cut.Add(-time.Second), old2.ID)
		o.publishAt(t, cut, atCut.ID)
		o.publishAt(t, cut.Add(time.Hour), recent.ID)

		purge := func(before time.Time) int {
			t.Helper()
			n, err := o.src.Purge(ctx, before)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := purge(cut); n != 2 {
			t.Fatalf("Purge(cut) deleted %d events, want the 2 published before it", n)
		}
		if n := purge(cut); n != 0 {
			t.Fatalf("second Purge(cut) deleted %d events, want 0", n)
		}
		sameIDs(t, pending(t, o, 10), unpublished)
		// The events published at and after the cut-off were kept: a later cut-off finds them.
		if n := purge(cut.Add(100 * 365 * 24 * time.Hour)); n != 2 {
			t.Fatalf("Purge(far future) deleted %d events, want the 2 kept before", n)
		}
		sameIDs(t, pending(t, o, 10), unpublished)
	})
	t.Run("non-positive limit is an error", func(t *testing.T) {
		if _, err := open(t).src.Pending(ctx, 0); err == nil {
			t.Fatal("Pending(0) succeeded")
		}
	})
}

// sameJSON compares JSON by value: jsonb does not keep protojson's spacing.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

func TestMemoryOutbox(t *testing.T) {
	runOutboxSuite(t, func(*testing.T) outboxUnderTest {
		o := &events.MemoryOutbox{}
		return outboxUnderTest{
			src: o,
			add: func(_ *testing.T, evs ...events.Event) { o.Add(context.Background(), evs...) },
			publishAt: func(t *testing.T, at time.Time, ids ...string) {
				t.Helper()
				o.SetClock(func() time.Time { return at })
				if err := o.MarkPublished(context.Background(), ids); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

func TestPGOutbox(t *testing.T) {
	runOutboxSuite(t, func(t *testing.T) outboxUnderTest {
		pool := pgPool(t)
		src := events.NewPGOutbox(pool)
		return outboxUnderTest{
			src: src,
			add: func(t *testing.T, evs ...events.Event) {
				t.Helper()
				if err := pgxx.InTx(context.Background(), pool, func(ctx context.Context, tx pgx.Tx) error {
					return events.InsertOutbox(ctx, tx, evs...)
				}); err != nil {
					t.Fatal(err)
				}
			},
			publishAt: func(t *testing.T, at time.Time, ids ...string) {
				t.Helper()
				ctx := context.Background()
				if err := src.MarkPublished(ctx, ids); err != nil {
					t.Fatal(err)
				}
				// MarkPublished stamps the database's now(); move it to the time the test wants.
				if _, err := pool.Exec(ctx, `update outbox set published_at = $1 where id = any($2::uuid[])`, at, ids); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// TestPGPurgeWorksThroughMoreThanOneBatch fills the outbox and the inbox with more old rows than one
// purge statement deletes, next to rows that must stay.
func TestPGPurgeWorksThroughMoreThanOneBatch(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	cut := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
	const old, kept = 2500, 3 // old spans three batches, the last one partial
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	count := func(table string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insertOutbox := `insert into outbox (id, type, source, app_id, time, data, published_at)
		select gen_random_uuid(), 'identity.user.updated', 'identity', 'app1', now(), '{}', $2::timestamptz
		from generate_series(1, $1::int)`
	exec(insertOutbox, old, cut.Add(-time.Hour))
	exec(insertOutbox, kept, cut.Add(time.Hour))
	exec(`insert into outbox (id, type, source, app_id, time, data)
		select gen_random_uuid(), 'identity.user.updated', 'identity', 'app1', now(), '{}'
		from generate_series(1, $1::int)`, kept) // unpublished
	insertInbox := `insert into inbox (consumer, event_id, processed_at)
		select 'c1', gen_random_uuid(), $2::timestamptz from generate_series(1, $1::int)`
	exec(insertInbox, old, cut.Add(-time.Hour))
	exec(insertInbox, kept, cut.Add(time.Hour))

	if n, err := events.NewPGOutbox(pool).Purge(ctx, cut); err != nil || n != old {
		t.Fatalf("outbox Purge = %d, %v; want %d, nil", n, err, old)
	}
	if n := count("outbox"); n != 2*kept {
		t.Fatalf("outbox holds %d rows after the purge, want the %d recent and unpublished ones", n, 2*kept)
	}
	if n, err := events.PurgeInbox(ctx, pool, cut); err != nil || n != old {
		t.Fatalf("PurgeInbox = %d, %v; want %d, nil", n, err, old)
	}
	if n := count("inbox"); n != kept {
		t.Fatalf("inbox holds %d rows after the purge, want the %d recent ones", n, kept)
	}
}

func TestPGOutboxKeepsNoEventOfARolledBackChange(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	errBoom := errors.New("boom")
	err := pgxx.InTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into account (id) values ('a1')"); err != nil {
			return err
		}
		if err := events.InsertOutbox(ctx, pgxx.Q(ctx, pool), newEvent(t, identityv1.EventUserUpdated, "a1")); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("err = %v", err)
	}
	if evs, err := events.NewPGOutbox(pool).Pending(ctx, 10); err != nil || len(evs) != 0 {
		t.Fatalf("pending = %v, %v; want no event", evs, err)
	}
}

func TestInsertOutboxRejectsInvalidEvents(t *testing.T) {
	pool := pgPool(t)
	valid := newEvent(t, identityv1.EventUserUpdated, "u1")
	noID, badType := valid, valid
	noID.ID = "42"
	badType.Type = "nowhere.thing"
	for _, ev := range []events.Event{noID, badType} {
		if err := events.InsertOutbox(context.Background(), pool, ev); err == nil {
			t.Errorf("InsertOutbox(%+v) succeeded", ev)
		}
	}
}

// Commits made while no connection listened notified no one, so a listener that starts (or
// reconnects) wakes its relay once by itself, and the relay's idle poll never has to find them.
func TestPGOutboxWakesItsRelayOnceItListensWithoutAnyCommit(t *testing.T) {
	pool := pgPool(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	select {
	case <-events.NewPGOutbox(pool).(events.Waker).Wakeups(ctx):
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after the listener started")
	}
}

func TestPGOutboxWakesRelaysWhenTheWritingTransactionCommitsNotBefore(t *testing.T) {
	pool := pgPool(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := events.NewPGOutbox(pool).(events.Waker).Wakeups(ctx)
	// The listener connects in the background; a notification sent before it listens is lost, so
	// keep committing until one arrives (bounded), then check that an open transaction wakes no one.
	deadline := time.After(10 * time.Second)
	for woken := false; !woken; {
		if err := pgxx.InTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
			return events.InsertOutbox(ctx, tx, newEvent(t, identityv1.EventUserUpdated, "u1"))
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wake:
			woken = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no wake-up after committed outbox writes")
		}
	}
	// The listener also signals once it listens, and an earlier commit's notification may still be
	// on its way: let both arrive and drop them, so only the transaction below can wake.
	time.Sleep(300 * time.Millisecond)
	select {
	case <-wake:
	default:
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := events.InsertOutbox(ctx, tx, newEvent(t, identityv1.EventUserUpdated, "u1")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
		t.Fatal("woken before the transaction committed")
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after the commit")
	}
}
