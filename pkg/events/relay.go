package events

import (
	"context"
	"log/slog"
	"time"
)

const (
	// relayBatch is how many events one Pending call returns.
	relayBatch = 100
	// relayPoll is how long Run waits for a Notify before looking again: it bounds the delay of an
	// event whose commit did not Notify this process (another replica wrote it, or it was written
	// before a restart).
	relayPoll = 200 * time.Millisecond
	// relayMaxBackoff caps the wait after consecutive errors (NATS or Postgres down).
	relayMaxBackoff = 5 * time.Second
)

// Relay moves outbox events to JetStream.
type Relay struct {
	src  OutboxSource
	bus  Bus
	log  *slog.Logger
	wake chan struct{}
}

// NewRelay returns a relay from src to bus. log receives errors; nil means slog.Default().
func NewRelay(src OutboxSource, bus Bus, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.Default()
	}
	return &Relay{src: src, bus: bus, log: log, wake: make(chan struct{}, 1)}
}

// Flush publishes pending events in order and marks them published, batch after batch until the
// outbox is empty, and returns how many it published. It stops at the first event it cannot publish,
// so a later event never overtakes an earlier one; the events published before it are still marked.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	total := 0
	for {
		evs, err := r.src.Pending(ctx, relayBatch)
		if err != nil {
			return total, err
		}
		ids := make([]string, 0, len(evs))
		var publishErr error
		for _, ev := range evs {
			if publishErr = r.bus.Publish(ctx, ev); publishErr != nil {
				break
			}
			ids = append(ids, ev.ID)
		}
		if len(ids) > 0 {
			if err := r.src.MarkPublished(ctx, ids); err != nil {
				// The events are in JetStream; the next pass republishes them and the stream's
				// duplicate window drops the copies.
				return total, err
			}
		}
		total += len(ids)
		if publishErr != nil {
			return total, publishErr
		}
		if len(evs) < relayBatch {
			return total, nil
		}
	}
}

// Run flushes until ctx ends, then returns nil. Between passes it waits for Notify or relayPoll;
// after an error it logs and waits longer each time, up to relayMaxBackoff.
func (r *Relay) Run(ctx context.Context) error {
	wait := relayPoll
	for {
		wake := r.wake
		if _, err := r.Flush(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			wait = min(wait*2, relayMaxBackoff)
			// While backing off, commits must not turn retries into a busy loop against a broken
			// dependency, so only the timer ends the wait.
			wake = nil
			r.log.Error("events relay: flush failed", "err", err, "retry_in", wait)
		} else {
			wait = relayPoll
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

// Notify wakes Run for an early pass; call it after committing a transaction that wrote events.
// It never blocks: a wake-up already pending covers this one too.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}
