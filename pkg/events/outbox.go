package events

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/tracing"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the outbox and inbox tables. Each service applies it next to its own set:
// pgxx.Migrate(ctx, pool, "events", events.Migrations).
var Migrations = mustSub(migrationFiles, "migrations")

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the directory is embedded at build time; failing here is a build defect
	}
	return sub
}

// OutboxSource is where a Relay finds events to publish.
type OutboxSource interface {
	// Pending returns up to limit unpublished events, oldest first.
	Pending(ctx context.Context, limit int) ([]Event, error)
	// MarkPublished records that the events with these ids are stored in JetStream.
	MarkPublished(ctx context.Context, ids []string) error
	// Purge deletes the events marked published before publishedBefore and returns how many it
	// deleted. Unpublished events are never deleted, so an event leaves the outbox only after
	// JetStream holds it and the outbox knows; nothing can republish it afterwards.
	Purge(ctx context.Context, publishedBefore time.Time) (int, error)
}

// outboxChannel is the Postgres notification channel that wakes relays. A notification sent inside a
// transaction is delivered only when it commits, which is exactly when its events become pending.
const outboxChannel = "berth_outbox"

// InsertOutbox writes events to the outbox, each stamped with the actor of ctx (see Actor). Call it with the transaction of the state change the
// events describe (pgxx.Q(ctx, pool) inside pgxx.InTx), so both commit or neither does. It also
// notifies the database's relays, which Postgres delivers on commit: every service's writes wake
// its relay (on whichever replica) without the use cases knowing a relay exists.
func InsertOutbox(ctx context.Context, q pgxx.Querier, evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	if _, err := q.Exec(ctx, `select pg_notify($1, '')`, outboxChannel); err != nil {
		return fmt.Errorf("events: notify relays: %w", err)
	}
	trace := tracing.Inject(ctx) // nil (SQL null) when the writer is not traced
	for _, ev := range stamp(ctx, slices.Clone(evs)) {
		if err := ev.validate(); err != nil {
			return err
		}
		actor, err := marshalActor(ev.Actor)
		if err != nil {
			return err
		}
		if _, err := q.Exec(ctx,
			`insert into outbox (id, type, source, app_id, time, data, trace, actor) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
			ev.ID, ev.Type, ev.Source, ev.AppID, ev.Time, []byte(ev.Data), trace, actor); err != nil {
			return fmt.Errorf("events: insert outbox %s: %w", ev.ID, err)
		}
	}
	return nil
}

type pgOutbox struct{ pool *pgxpool.Pool }

// NewPGOutbox reads the outbox table of pool's database.
//
// Pending selects with FOR UPDATE SKIP LOCKED, so relays of several replicas polling at the same
// moment neither block one another nor read the same rows. The row locks end with Pending's
// transaction, though, so two relays can still publish one event when their passes interleave
// (exactly as one relay does after a crash between publish and MarkPublished); the stream's
// duplicate window and the consumers' inbox absorb that, which is why nothing here holds a lock
// across the network round trip to NATS.
func NewPGOutbox(pool *pgxpool.Pool) OutboxSource {
	return pgOutbox{pool: pool}
}

func (o pgOutbox) Pending(ctx context.Context, limit int) ([]Event, error) {
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	var evs []Event
	err := pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `select id::text, type, source, app_id, time, data, trace, actor from outbox
			where published_at is null order by seq limit $1 for update skip locked`, limit)
		if err != nil {
			return err
		}
		evs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
			var ev Event
			var data, actor []byte
			if err := row.Scan(&ev.ID, &ev.Type, &ev.Source, &ev.AppID, &ev.Time, &data, &ev.Trace, &actor); err != nil {
				return ev, err
			}
			ev.Time = ev.Time.UTC()
			ev.Data = data
			a, err := unmarshalActor(actor)
			ev.Actor = a
			return ev, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events: read outbox: %w", err)
	}
	return evs, nil
}

// Wakeups listens for the notifications InsertOutbox sends, on a connection of its own, until ctx
// ends, and also signals each time it starts listening. A lost connection is re-established after a
// second; the signal on listening again covers the commits made in between.
func (o pgOutbox) Wakeups(ctx context.Context) <-chan struct{} {
	wake := make(chan struct{}, 1)
	go func() {
		for ctx.Err() == nil {
			if err := o.listen(ctx, wake); err != nil && ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return wake
}

func (o pgOutbox) listen(ctx context.Context, wake chan<- struct{}) error {
	conn, err := o.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection will hold LISTEN: it must never go back to the pool's other users.
	pc := conn.Hijack()
	// Closing ends the LISTEN with the connection, which nobody else uses: an error there loses nothing.
	defer func() { _ = pc.Close(context.Background()) }()
	if _, err := pc.Exec(ctx, "listen "+outboxChannel); err != nil {
		return err
	}
	// Commits made while no connection listened notified no one: one pass now finds their events,
	// so the relay's idle poll never has to.
	signal(wake)
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			return err
		}
		signal(wake)
	}
}

func (o pgOutbox) MarkPublished(ctx context.Context, ids []string) error {
	if _, err := o.pool.Exec(ctx, `update outbox set published_at = now() where id = any($1::uuid[]) and published_at is null`, ids); err != nil {
		return fmt.Errorf("events: mark outbox published: %w", err)
	}
	return nil
}

func (o pgOutbox) Purge(ctx context.Context, publishedBefore time.Time) (int, error) {
	// A null published_at never compares below a time, so unpublished rows cannot match.
	n, err := deleteInBatches(ctx, o.pool, `delete from outbox where id in (
		select id from outbox where published_at < $1 limit $2 for update skip locked)`, publishedBefore)
	if err != nil {
		return n, fmt.Errorf("events: purge outbox: %w", err)
	}
	return n, nil
}

// purgeBatch bounds the rows one purge statement deletes, so a backlog (the first purge after an
// upgrade, or after a long outage) becomes a series of short transactions instead of one that
// holds locks and bloats the WAL in a single go.
const purgeBatch = 1000

// deleteInBatches runs query, a delete taking the cut-off time as $1 and the batch size as $2,
// until a run deletes fewer than purgeBatch rows, and returns how many rows it deleted in all.
func deleteInBatches(ctx context.Context, pool *pgxpool.Pool, query string, before time.Time) (int, error) {
	total := 0
	for {
		tag, err := pool.Exec(ctx, query, before, purgeBatch)
		if err != nil {
			return total, err
		}
		n := int(tag.RowsAffected())
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

// MemoryOutbox is the outbox of memory stores. The zero value is ready to use.
type MemoryOutbox struct {
	mu        sync.Mutex
	wake      chan struct{} // made on first use; Add signals it
	pending   []Event
	published []publishedEvent // in the order they were marked, so oldest first
	now       func() time.Time // nil means time.Now; tests set it to mark at chosen times
}

// publishedEvent is what a MemoryOutbox keeps of a published event until Purge: only the id and
// when it was marked, since nothing reads a published event again.
type publishedEvent struct {
	id string
	at time.Time
}

// Add appends events. Memory stores call it while holding their own lock for the state change, so
// the change and its events become visible together.
func (o *MemoryOutbox) Add(ctx context.Context, evs ...Event) {
	trace := tracing.Inject(ctx)
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ev := range stamp(ctx, slices.Clone(evs)) {
		ev.Trace = trace
		o.pending = append(o.pending, ev)
	}
	signal(o.wakeChan())
}

// Wakeups signals after every Add, so a relay publishes at once.
func (o *MemoryOutbox) Wakeups(context.Context) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.wakeChan()
}

func (o *MemoryOutbox) wakeChan() chan struct{} {
	if o.wake == nil {
		o.wake = make(chan struct{}, 1)
	}
	return o.wake
}

// signal never blocks: a wake-up already pending covers this one too.
func signal(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

// Pending returns up to limit unpublished events, oldest first.
func (o *MemoryOutbox) Pending(_ context.Context, limit int) ([]Event, error) {
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.pending[:min(limit, len(o.pending))]), nil
}

// MarkPublished moves the events with these ids from pending to published; ids it does not hold as
// pending (marked before, or never added) are ignored, as the Postgres outbox does.
func (o *MemoryOutbox) MarkPublished(_ context.Context, ids []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	at := now()
	o.pending = slices.DeleteFunc(o.pending, func(ev Event) bool {
		if !slices.Contains(ids, ev.ID) {
			return false
		}
		o.published = append(o.published, publishedEvent{id: ev.ID, at: at})
		return true
	})
	return nil
}

// Purge forgets the events marked published before publishedBefore.
func (o *MemoryOutbox) Purge(_ context.Context, publishedBefore time.Time) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	before := len(o.published)
	o.published = slices.DeleteFunc(o.published, func(p publishedEvent) bool { return p.at.Before(publishedBefore) })
	return before - len(o.published), nil
}

func checkLimit(limit int) error {
	if limit <= 0 {
		return fmt.Errorf("events: outbox limit must be positive, got %d", limit)
	}
	return nil
}
