package events

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
)

// Inbox records processed event ids so a redelivered message is applied once.
type Inbox interface {
	// Once runs fn unless (consumer, eventID) was already recorded; records it atomically with fn's
	// effect. applied is false when fn did not run or failed.
	Once(ctx context.Context, consumer, eventID string, fn func(ctx context.Context) error) (applied bool, err error)
}

// AfterApply runs fn once the effects of the event being applied are committed: after its inbox
// transaction (an Inbox's Once or OnceEach), or at once when ctx carries none. A handler wakes
// work that must see its effects this way: woken inside the transaction, the work would look
// before they are visible, find nothing, and wait for its next poll. fn does not run when the
// transaction fails.
func AfterApply(ctx context.Context, fn func()) {
	if a, ok := ctx.Value(afterApplyKey{}).(*afterApplyHooks); ok {
		a.fns = append(a.fns, fn)
		return
	}
	fn()
}

type afterApplyKey struct{}

type afterApplyHooks struct{ fns []func() }

// withAfterApply returns ctx collecting AfterApply's functions, and the function that runs them
// once the transaction has committed.
func withAfterApply(ctx context.Context) (context.Context, func()) {
	a := &afterApplyHooks{}
	return context.WithValue(ctx, afterApplyKey{}, a), func() {
		for _, fn := range a.fns {
			fn()
		}
	}
}

// BatchInbox is an Inbox that can also apply several events in one transaction: a consumer of many
// small events then pays one commit (one write-ahead log flush) per batch instead of one per
// event. The PostgreSQL inbox is one; the memory inbox is not, as memory stores have no
// transaction to roll a batch back with.
type BatchInbox interface {
	Inbox
	// OnceEach records those of eventIDs not recorded yet and runs fn once with their indexes
	// (in the order given; an event given twice counts once, at its first place), in one
	// transaction that ctx carries to fn: either fn succeeds and they are recorded with its
	// effects, or nothing is. fn is not called when every event was recorded before. applied[i]
	// tells whether eventIDs[i] was among those fn was given; on an error applied is nil.
	OnceEach(ctx context.Context, consumer string, eventIDs []string, fn func(ctx context.Context, fresh []int) error) (applied []bool, err error)
}

// InboxPurger is an Inbox that can forget old records. Both inboxes of this package implement it,
// and Bus.Consume purges an inbox that does (see inboxRetention).
type InboxPurger interface {
	// Purge deletes the records of events processed before processedBefore and returns how many
	// it deleted.
	Purge(ctx context.Context, processedBefore time.Time) (int, error)
}

type pgInbox struct{ pool *pgxpool.Pool }

// NewPGInbox keeps the inbox in pool's database. Once runs fn in the transaction that inserts the
// inbox row, with a ctx carrying it, so store code using pgxx.InTx or pgxx.Q joins that transaction
// and the effect commits or rolls back together with the record.
func NewPGInbox(pool *pgxpool.Pool) Inbox {
	return pgInbox{pool: pool}
}

// Once is OnceEach of one event: a concurrent delivery of the same event waits on the inbox's
// primary key until the first transaction ends, then sees the row and does nothing.
func (i pgInbox) Once(ctx context.Context, consumer, eventID string, fn func(ctx context.Context) error) (bool, error) {
	applied, err := i.OnceEach(ctx, consumer, []string{eventID}, func(ctx context.Context, _ []int) error { return fn(ctx) })
	if err != nil {
		return false, err
	}
	return applied[0], nil
}

func (i pgInbox) OnceEach(ctx context.Context, consumer string, eventIDs []string, fn func(ctx context.Context, fresh []int) error) ([]bool, error) {
	applied := make([]bool, len(eventIDs))
	ctx, committed := withAfterApply(ctx)
	err := pgxx.InTx(ctx, i.pool, func(ctx context.Context, tx pgx.Tx) error {
		// The rows are inserted in the ids' order, so two transactions recording overlapping batches
		// (a redelivery beside the first delivery) wait on each other's rows in one order and never
		// deadlock; the later one then skips what the first recorded.
		rows, err := tx.Query(ctx, `insert into inbox (consumer, event_id)
			select $1, id from (select distinct unnest($2::uuid[]) as id) ids order by id
			on conflict do nothing returning event_id::text`, consumer, eventIDs)
		if err != nil {
			return fmt.Errorf("events: record %d events in inbox of %s: %w", len(eventIDs), consumer, err)
		}
		recorded, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("events: record %d events in inbox of %s: %w", len(eventIDs), consumer, err)
		}
		unseen := make(map[string]bool, len(recorded))
		for _, id := range recorded {
			unseen[id] = true
		}
		fresh := make([]int, 0, len(recorded))
		for n, id := range eventIDs {
			if key := strings.ToLower(id); unseen[key] { // lower case, as PostgreSQL writes a uuid
				delete(unseen, key) // a second copy in the batch is a duplicate
				fresh = append(fresh, n)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		if err := fn(ctx, fresh); err != nil {
			return err
		}
		for _, n := range fresh {
			applied[n] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	committed()
	return applied, nil
}

func (i pgInbox) Purge(ctx context.Context, processedBefore time.Time) (int, error) {
	return PurgeInbox(ctx, i.pool, processedBefore)
}

// PurgeInbox deletes the inbox rows, of every consumer, processed before processedBefore, at most
// purgeBatch rows per statement, and returns how many it deleted.
func PurgeInbox(ctx context.Context, pool *pgxpool.Pool, processedBefore time.Time) (int, error) {
	n, err := deleteInBatches(ctx, pool, `delete from inbox where (consumer, event_id) in (
		select consumer, event_id from inbox where processed_at < $1 limit $2 for update skip locked)`, processedBefore)
	if err != nil {
		return n, fmt.Errorf("events: purge inbox: %w", err)
	}
	return n, nil
}

type inboxKey struct{ consumer, eventID string }

type memoryInbox struct {
	mu      sync.Mutex
	done    map[inboxKey]time.Time     // when the event was processed
	running map[inboxKey]chan struct{} // closed when that fn returns
	now     func() time.Time           // when a record is made; tests replace it
}

// NewMemoryInbox keeps the inbox in process memory, for memory stores.
func NewMemoryInbox() Inbox {
	return &memoryInbox{done: map[inboxKey]time.Time{}, running: map[inboxKey]chan struct{}{}, now: time.Now}
}

func (i *memoryInbox) Purge(_ context.Context, processedBefore time.Time) (int, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	n := 0
	for k, at := range i.done {
		if at.Before(processedBefore) {
			delete(i.done, k)
			n++
		}
	}
	return n, nil
}

func (i *memoryInbox) Once(ctx context.Context, consumer, eventID string, fn func(ctx context.Context) error) (bool, error) {
	k := inboxKey{consumer, eventID}
	var finished chan struct{}
	for finished == nil {
		i.mu.Lock()
		if _, ok := i.done[k]; ok {
			i.mu.Unlock()
			return false, nil
		}
		if other, ok := i.running[k]; ok {
			// Another delivery of this event is running; its outcome decides whether this one runs.
			// fn runs outside the lock so unrelated events are not serialised behind a slow handler.
			i.mu.Unlock()
			select {
			case <-other:
				continue
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		finished = make(chan struct{})
		i.running[k] = finished
		i.mu.Unlock()
	}

	// Deferred so that a panicking fn still releases the deliveries waiting on it.
	succeeded := false
	defer func() {
		i.mu.Lock()
		defer i.mu.Unlock()
		delete(i.running, k)
		close(finished)
		if succeeded {
			i.done[k] = i.now()
		}
	}()
	ctx, applied := withAfterApply(ctx)
	if err := fn(ctx); err != nil {
		return false, err
	}
	succeeded = true
	applied()
	return true, nil
}
