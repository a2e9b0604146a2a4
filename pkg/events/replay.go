package events

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// ReplayStats counts what a replay did.
type ReplayStats struct {
	Applied   int // events fn applied
	Malformed int // events fn refused as malformed (ErrMalformed), skipped as a consumer would
}

// Replay hands fn every stored event of the given types, oldest first per context, up to the last
// one each stream held when the replay of that context began: the way to rebuild a read model from
// scratch. It reads with ephemeral ordered consumers, so it leaves no trace on the server and never
// disturbs the durable consumers; fn must therefore be idempotent (every projector is: events are
// keyed), since durable consumers may apply the same events meanwhile. A message that is not a
// valid event is skipped; an fn error other than ErrMalformed stops the replay.
func (b Bus) Replay(ctx context.Context, types []eventsv1.Type, fn Handler) (ReplayStats, error) {
	var stats ReplayStats
	byContext := map[string][]eventsv1.Type{}
	var order []string
	for _, t := range types {
		c, err := contextOf(t)
		if err != nil {
			return stats, err
		}
		if _, seen := byContext[c]; !seen {
			order = append(order, c)
		}
		byContext[c] = append(byContext[c], t)
	}
	for _, c := range order {
		if err := b.replayStream(ctx, byContext[c], fn, &stats); err != nil {
			return stats, err
		}
	}
	return stats, nil
}

// replayStream replays one context's stream.
func (b Bus) replayStream(ctx context.Context, types []eventsv1.Type, fn Handler, stats *ReplayStats) error {
	streamName, filter, err := b.filterFor(types)
	if err != nil {
		return err
	}
	stream, err := b.JS.Stream(ctx, streamName)
	if err != nil {
		return fmt.Errorf("events: replay %s: %w", streamName, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("events: replay %s: %w", streamName, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := b.JS.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("events: replay %s: %w", streamName, err)
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("events: replay %s: %w", streamName, err)
	}
	if ci.NumPending == 0 { // nothing matches the filter: waiting for a message would wait for ever
		return nil
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("events: replay %s: %w", streamName, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop) // Next does not watch ctx
	defer stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("events: replay %s: %w", streamName, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("events: replay %s: %w", streamName, err)
		}
		if ev, err := b.decodeMsg(msg); err == nil && slices.Contains(types, ev.Type) {
			switch err := fn(ctx, ev); {
			case err == nil:
				stats.Applied++
			case errors.Is(err, ErrMalformed):
				stats.Malformed++
			default:
				return fmt.Errorf("events: replay %s: event %s: %w", streamName, ev.ID, err)
			}
		}
		if meta.Sequence.Stream >= last || meta.NumPending == 0 {
			return nil
		}
	}
}
