package events

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

const (
	// relayBatch is how many events one Pending call returns.
	relayBatch = 100
	// relayPoll is how long Run waits before looking again when its source cannot wake it, or has
	// just had events: it bounds the delay of an event nothing announced.
	relayPoll = 200 * time.Millisecond
	// relayIdlePoll caps the wait while a source that wakes the relay (a Waker) stays empty. Every
	// commit with events wakes the relays of all replicas, and so does a listener that has just
	// (re)connected, so the poll only guards against a wake-up lost some other way (a connection that
	// died without an error); doubling it while idle saves the five services' idle transactions
	// (25 a second at relayPoll) at the cost of that rare event's delay.
	relayIdlePoll = 5 * time.Second
	// relayMaxBackoff caps the wait after consecutive errors (NATS or Postgres down).
	relayMaxBackoff = 5 * time.Second
	// relayPurgeEvery is how often Run purges published events: often enough that the outbox stays
	// small, rarely enough that the deletes cost nothing next to the polling.
	relayPurgeEvery = 10 * time.Minute
	// DefaultOutboxRetention is how long published events stay in the outbox. Deleting a published
	// row cannot cause a republish whatever the retention (only unpublished rows are ever read);
	// the day is far beyond JetStream's two-minute duplicate window and leaves the rows for
	// inspecting what a service emitted recently.
	DefaultOutboxRetention = 24 * time.Hour
)

// Relay moves outbox events to JetStream and deletes them from the outbox once they have been
// published for longer than its retention (DefaultOutboxRetention unless SetRetention changes it).
type Relay struct {
	name      string
	src       OutboxSource
	bus       Bus
	log       *slog.Logger
	retention time.Duration
}

// Waker is an OutboxSource that signals when events may have become pending (the Postgres outbox on
// commit, the memory outbox on Add), so Run publishes at once instead of at its next poll.
type Waker interface {
	Wakeups(ctx context.Context) <-chan struct{}
}

// NewRelay returns a relay from src to bus; name (the publishing service) labels its metrics. log
// receives errors; nil means slog.Default().
func NewRelay(name string, src OutboxSource, bus Bus, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.Default()
	}
	return &Relay{name: name, src: src, bus: bus, log: log, retention: DefaultOutboxRetention}
}

// SetRetention sets how long published events stay in the outbox before Run deletes them. It must
// be positive, and be called before Run.
func (r *Relay) SetRetention(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("events: outbox retention must be positive, got %s", d)
	}
	r.retention = d
	return nil
}

// Flush publishes pending events in order and marks them published, batch after batch until the
// outbox is empty, and returns how many it published. A batch is published pipelined
// (Bus.PublishBatch). Flush stops at the first event it cannot publish; the events published before
// it are still marked, and it and those after it are published again on the next pass.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	total := 0
	for {
		evs, err := r.src.Pending(ctx, relayBatch)
		if err != nil {
			return total, err
		}
		observeLag(r.name, evs)
		n, publishErr := r.bus.PublishBatch(ctx, evs)
		ids := make([]string, n)
		for i, ev := range evs[:n] {
			ids[i] = ev.ID
		}
		if len(ids) > 0 {
			if err := r.src.MarkPublished(ctx, ids); err != nil {
				// The events are in JetStream; the next pass republishes them and the stream's
				// duplicate window drops the copies.
				return total, err
			}
		}
		total += len(ids)
		relayPublished.WithLabelValues(r.name).Add(float64(len(ids)))
		if publishErr != nil {
			return total, publishErr
		}
		if len(evs) < relayBatch {
			return total, nil
		}
	}
}

// Run flushes until ctx ends, then returns nil. Between passes it waits for the source's wake-up
// (see Waker) or a poll interval (see nextWait); after an error it logs and waits longer each time,
// up to relayMaxBackoff. It also purges the events published longer ago than the retention, when it
// starts and then every relayPurgeEvery.
func (r *Relay) Run(ctx context.Context) error {
	wait := relayPoll
	var wakeups <-chan struct{} // nil (never ready) unless the source signals
	if w, ok := r.src.(Waker); ok {
		wakeups = w.Wakeups(ctx)
	}
	var nextPurge time.Time // zero: purge on the first pass
	for {
		if now := time.Now(); !now.Before(nextPurge) {
			r.purge(ctx, now)
			nextPurge = now.Add(relayPurgeEvery)
		}
		wake := wakeups
		n, err := r.Flush(ctx)
		if err != nil && ctx.Err() != nil {
			return nil
		}
		wait = nextWait(wait, n, err, wakeups != nil)
		if err != nil {
			// While backing off, commits must not turn retries into a busy loop against a broken
			// dependency, so only the timer ends the wait.
			wake = nil
			relayErrors.WithLabelValues(r.name).Inc()
			r.log.Error("events relay: flush failed", "err", err, "retry_in", wait)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// nextWait is how long Run waits for a wake-up after a pass that waited prev before it, published
// n events and ended with err. A failed pass doubles the wait up to relayMaxBackoff. A pass that
// found nothing, on a source that wakes the relay, doubles it up to relayIdlePoll: the wake-ups
// carry the work, and an idle service stops costing a transaction every relayPoll. Any other pass
// polls again after relayPoll.
func nextWait(prev time.Duration, n int, err error, wakes bool) time.Duration {
	switch {
	case err != nil:
		return min(prev*2, relayMaxBackoff)
	case n == 0 && wakes:
		return min(prev*2, relayIdlePoll)
	default:
		return relayPoll
	}
}

// purge deletes the events published before now minus the retention. A failure is only logged:
// the rows stay and the next purge, relayPurgeEvery later, takes them with the newer ones.
func (r *Relay) purge(ctx context.Context, now time.Time) {
	n, err := r.src.Purge(ctx, now.Add(-r.retention))
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("events relay: purging published events failed", "err", err, "deleted", n)
		}
		return
	}
	if n > 0 {
		r.log.Debug("events relay: purged published events", "deleted", n)
	}
}
