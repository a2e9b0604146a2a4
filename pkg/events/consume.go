package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/tracing"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

const (
	// consumeAckWait is how long the server waits for an ack before redelivering, so it bounds how
	// long a handler may take; a handler that outlives it races its own redelivery, which the inbox
	// turns into a no-op.
	consumeAckWait = 30 * time.Second
	// consumeMaxDeliver bounds retries of an event whose handler keeps failing, so one poison event
	// cannot occupy a consumer for ever. With nakDelay this gives a handler about four minutes to
	// recover (a dependency restarting) before the event is given up and logged.
	consumeMaxDeliver = 10
	nakBaseDelay      = 500 * time.Millisecond
	nakMaxDelay       = time.Minute
	// inboxRetention is how long a consumer's inbox remembers an applied event. The inbox only has
	// to catch redeliveries, and JetStream redelivers a message only while it is unacknowledged:
	// at most consumeMaxDeliver times, each after consumeAckWait or a nak delay of at most
	// nakMaxDelay, so minutes after the first delivery. A week is ample, and also covers a
	// republish by a relay that crashed before marking and stayed down for days.
	inboxRetention = 7 * 24 * time.Hour
	// inboxPurgeEvery is how often Consume purges its inbox.
	inboxPurgeEvery = time.Hour
)

// Handler applies one event. Returning an error makes the event come back later, unless it wraps
// ErrMalformed. Consumers build theirs with Handle, which decodes the payload and applies the one
// rule for an event whose payload does not decode.
type Handler func(ctx context.Context, ev Event) error

// BatchHandler applies several events, in order, in one inbox transaction (ConsumerConfig.Batch):
// for a consumer whose effects of many events cost less together than one by one (a statement
// for the batch instead of one per event). Returning an error sends the batch down the one-event
// path (Handler), which finds the event at fault. Consumers build theirs with HandleBatch.
type BatchHandler func(ctx context.Context, evs []Event) error

// ErrMalformed marks an event that can never be applied (its payload lacks or garbles what the
// handler needs). Consume logs and acknowledges it instead of redelivering it: a retry cannot help
// and would only occupy the consumer until MaxDeliver gives the event up anyway.
var ErrMalformed = errors.New("malformed event")

// ConsumerConfig configures Bus.Consume.
type ConsumerConfig struct {
	Durable string          // durable pull consumer name; replicas sharing it split the work
	Types   []eventsv1.Type // declared event types to receive, all from one context
	Inbox   Inbox
	Handler Handler
	Log     *slog.Logger // nil means slog.Default()
	// AckWait is how long the server waits for an event's ack before it delivers the event again,
	// to this or another replica: what a process that dies mid-event costs. 0 means consumeAckWait.
	AckWait time.Duration
	// Batch is at most how many events already waiting are applied in one inbox transaction, when
	// Inbox is a BatchInbox; 0 or 1 applies each in its own. A batch is what is waiting when the
	// consumer is ready, never a wait for more, so a lone event is applied at once. Batches save
	// a commit per event for a consumer of many small ones (outbound's); the handler must not
	// make calls whose effects a rolled-back batch cannot take back (a mail, an HTTP call), as a
	// failing event rolls back its batch and the batch is applied again one event at a time.
	Batch int
	// BatchHandler, if set, applies a batch's events in one call instead of Handler's one per event;
	// Handler stays required, for the one-event path.
	BatchHandler BatchHandler
}

func (c ConsumerConfig) validate() error {
	switch {
	case !validToken.MatchString(c.Durable):
		return fmt.Errorf("events: durable name %q may hold only letters, digits, '_' and '-'", c.Durable)
	case c.Inbox == nil:
		return errors.New("events: consumer needs an Inbox")
	case c.Handler == nil:
		return errors.New("events: consumer needs a Handler")
	}
	return nil
}

// Consume starts a durable pull consumer with explicit acks on the stream that holds cfg.Types. Each
// message is decoded and applied through cfg.Inbox, keyed by the durable name and the event id, then
// acknowledged, also when the inbox says it was applied before. A failing handler gets the message
// back after a growing delay; a message that is not a valid event is terminated and logged, since
// redelivering it cannot help. A new durable starts at the beginning of the stream, so a service
// deployed after events were published still sees them.
//
// If cfg.Inbox is an InboxPurger, Consume also deletes its records older than inboxRetention (7
// days), when it starts and then every hour; a failed purge is logged and retried the next hour.
//
// Consuming stops when ctx ends or when Stop is called; Stop also waits for the handler in flight
// and for a purge in progress.
func (b Bus) Consume(ctx context.Context, cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	stream, filter, err := b.filterFor(cfg.Types)
	if err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ackWait := cfg.AckWait
	if ackWait <= 0 {
		ackWait = consumeAckWait
	}
	cons, err := b.JS.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:       cfg.Durable,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    consumeMaxDeliver,
		FilterSubject: filter,
	})
	if err != nil {
		return nil, fmt.Errorf("events: create consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	c := &Consumer{name: cfg.Durable, js: b.JS, stream: stream, lost: make(chan struct{})}
	c.markLost = sync.OnceFunc(func() { close(c.lost) })
	wanted := slices.Clone(cfg.Types)
	batch, handle := 1, func(ctx context.Context, msgs []jetstream.Msg) { b.apply(ctx, cfg, wanted, msgs[0]) }
	if inbox, ok := cfg.Inbox.(BatchInbox); ok && cfg.Batch > 1 {
		batch, handle = cfg.Batch, func(ctx context.Context, msgs []jetstream.Msg) { b.applyBatch(ctx, cfg, inbox, wanted, msgs) }
	}
	stopPulling, err := b.run(ctx, []jetstream.Consumer{cons}, cfg.Log, c.markLost, batch, handle)
	if err != nil {
		return nil, err
	}
	c.stop = stopPulling
	if purger, ok := cfg.Inbox.(InboxPurger); ok {
		stopPurging := purgeInboxEvery(ctx, purger, cfg.Log.With("consumer", cfg.Durable))
		c.stop = sync.OnceFunc(func() {
			stopPurging()
			stopPulling()
		})
	}
	return c, nil
}

// Consumer is a running durable consumer.
type Consumer struct {
	name     string
	js       jetstream.JetStream
	stream   string
	lost     chan struct{}
	markLost func() // closes lost once
	stop     func()
}

// Name is the durable's name.
func (c *Consumer) Name() string { return c.name }

// Stop ends consuming and waits for the event being applied.
func (c *Consumer) Stop() { c.stop() }

// Lost is closed when the server says the durable no longer exists (someone deleted it or its
// stream). Pulling cannot bring it back; the process should stop so that its next start creates the
// durable again, resuming from where the stream's retention allows.
func (c *Consumer) Lost() <-chan struct{} { return c.lost }

// Check reports whether the consumer can still receive events: its pull loop runs and the server
// knows its durable. Readiness probes call it regularly, and the pull loop may only hear of a
// deletion at its next heartbeat, so a Check that finds the durable gone also reports it Lost.
func (c *Consumer) Check(ctx context.Context) error {
	select {
	case <-c.lost:
		return fmt.Errorf("events: consumer %s is gone", c.name)
	default:
	}
	if _, err := c.js.Consumer(ctx, c.stream, c.name); err != nil {
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			c.markLost()
		}
		return fmt.Errorf("events: consumer %s: %w", c.name, err)
	}
	return nil
}

// purgeInboxEvery purges in now and then every inboxPurgeEvery until ctx ends or the returned stop
// is called; stop waits for a purge in progress.
func purgeInboxEvery(ctx context.Context, in InboxPurger, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(inboxPurgeEvery)
		defer ticker.Stop()
		for {
			n, err := in.Purge(ctx, time.Now().Add(-inboxRetention))
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				log.Error("events: purging the inbox failed", "err", err, "deleted", n)
			case n > 0:
				log.Debug("events: purged the inbox", "deleted", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// apply handles one message of a durable consumer.
func (b Bus) apply(ctx context.Context, cfg ConsumerConfig, wanted []eventsv1.Type, msg jetstream.Msg) {
	log := cfg.Log.With("consumer", cfg.Durable, "subject", msg.Subject())
	ev, err := b.decodeMsg(msg)
	if err != nil {
		log.Error("events: terminating a message that is not a valid event", "err", err)
		if err := msg.Term(); err != nil {
			log.Warn("events: term failed", "err", err)
		}
		return
	}
	log = log.With("event_id", ev.ID, "event_type", ev.Type)
	if !slices.Contains(wanted, ev.Type) {
		// Delivered only because the server-side filter is the context wildcard (see filterFor).
		consumed.WithLabelValues(cfg.Durable, "skipped").Inc()
		ack(log, msg)
		return
	}
	ctx, span := tracing.Consume(ctx, ev.Trace, cfg.Durable, string(ev.Type))
	// What the handler appends was caused by this consumer reacting, not by whoever called last.
	ctx = WithActor(ctx, consumerActor(cfg.Durable))
	applied, err := cfg.Inbox.Once(ctx, cfg.Durable, ev.ID, func(ctx context.Context) error { return cfg.Handler(ctx, ev) })
	tracing.End(span, err)
	// The lines about the outcome are logged with ctx: they name the trace the event continued.
	if errors.Is(err, ErrUndecodable) {
		// The one rule for a payload that does not decode (see Handle).
		consumed.WithLabelValues(cfg.Durable, "undecodable").Inc()
		log.ErrorContext(ctx, "events: acknowledging an event whose payload does not decode", "err", err)
		ack(log, msg)
		return
	}
	if errors.Is(err, ErrMalformed) {
		consumed.WithLabelValues(cfg.Durable, "malformed").Inc()
		log.ErrorContext(ctx, "events: acknowledging an event that can never apply", "err", err)
		ack(log, msg)
		return
	}
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down: hand the event straight back so another replica can take it.
			_ = msg.Nak()
			return
		}
		consumed.WithLabelValues(cfg.Durable, "failed").Inc()
		attempt := deliveries(msg)
		if attempt >= consumeMaxDeliver {
			log.ErrorContext(ctx, "events: handler failed on the last delivery; the event is given up", "attempt", attempt, "err", err)
		} else {
			log.ErrorContext(ctx, "events: handler failed; the event will be redelivered", "attempt", attempt, "err", err)
		}
		if err := msg.NakWithDelay(nakDelay(attempt)); err != nil {
			log.Warn("events: nak failed; the event comes back after the ack wait", "err", err)
		}
		return
	}
	settle(cfg.Durable, log, msg, applied)
}

// settle counts and acknowledges a message whose event the inbox applied now (applied) or had
// applied before (a redelivery).
func settle(durable string, log *slog.Logger, msg jetstream.Msg, applied bool) {
	if !applied {
		consumed.WithLabelValues(durable, "duplicate").Inc()
		log.Debug("events: event already applied; acknowledging the redelivery")
	} else {
		consumed.WithLabelValues(durable, "applied").Inc()
	}
	ack(log, msg)
}

// applyBatch applies the messages in as few inbox transactions as it can. A message that is no
// valid event, or of a type the consumer does not read, takes the one-event path at once.
func (b Bus) applyBatch(ctx context.Context, cfg ConsumerConfig, inbox BatchInbox, wanted []eventsv1.Type, msgs []jetstream.Msg) {
	evs, kept := make([]Event, 0, len(msgs)), make([]jetstream.Msg, 0, len(msgs))
	for _, msg := range msgs {
		ev, err := b.decodeMsg(msg)
		if err != nil || !slices.Contains(wanted, ev.Type) {
			b.apply(ctx, cfg, wanted, msg)
			continue
		}
		evs, kept = append(evs, ev), append(kept, msg)
	}
	for len(kept) > 0 {
		n := b.applyTogether(ctx, cfg, inbox, wanted, kept, evs)
		kept, evs = kept[n:], evs[n:]
	}
}

// applyTogether applies msgs (evs are their events) in one inbox transaction and returns how many
// of them, from the first, it settled. With a BatchHandler that fails, it tries again event by
// event. When the handler fails on one event, the transaction rolls back and it settles those
// before it (together again) or, if it was the first, that one alone on the one-event path (a
// redelivery, or an acknowledgement when it can never apply): so one failing event costs its batch
// a transaction or two more, and holds back none of the others.
func (b Bus) applyTogether(ctx context.Context, cfg ConsumerConfig, inbox BatchInbox, wanted []eventsv1.Type, msgs []jetstream.Msg, evs []Event) int {
	if len(msgs) == 1 {
		b.apply(ctx, cfg, wanted, msgs[0])
		return 1
	}
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	failed := -1
	apply := func(ctx context.Context, fresh []int) error {
		for _, i := range fresh {
			ctx, span := tracing.Consume(ctx, evs[i].Trace, cfg.Durable, string(evs[i].Type))
			err := cfg.Handler(ctx, evs[i])
			tracing.End(span, err)
			if err != nil {
				failed = i
				return err
			}
		}
		return nil
	}
	if cfg.BatchHandler != nil {
		apply = func(ctx context.Context, fresh []int) error {
			batch := make([]Event, len(fresh))
			spans := make([]trace.Span, len(fresh))
			for n, i := range fresh {
				batch[n] = evs[i]
				_, spans[n] = tracing.Consume(ctx, evs[i].Trace, cfg.Durable, string(evs[i].Type))
			}
			err := cfg.BatchHandler(ctx, batch)
			for _, span := range spans {
				tracing.End(span, err)
			}
			return err
		}
	}
	applied, err := inbox.OnceEach(WithActor(ctx, consumerActor(cfg.Durable)), cfg.Durable, ids, apply)
	switch {
	case err == nil:
		for i, msg := range msgs {
			settle(cfg.Durable, cfg.Log.With("consumer", cfg.Durable, "subject", msg.Subject(), "event_id", evs[i].ID, "event_type", evs[i].Type), msg, applied[i])
		}
		return len(msgs)
	case ctx.Err() != nil:
		for _, msg := range msgs {
			_ = msg.Nak() // shutting down: hand them straight back for another replica
		}
		return len(msgs)
	case cfg.BatchHandler != nil:
		one := cfg
		one.BatchHandler = nil
		return b.applyTogether(ctx, one, inbox, wanted, msgs, evs)
	case failed < 0:
		// The transaction failed, not a handler (a lost connection, say): each on its own path.
		for _, msg := range msgs {
			b.apply(ctx, cfg, wanted, msg)
		}
		return len(msgs)
	case failed == 0:
		b.apply(ctx, cfg, wanted, msgs[0])
		return 1
	default:
		return b.applyTogether(ctx, cfg, inbox, wanted, msgs[:failed], evs[:failed])
	}
}

func ack(log *slog.Logger, msg jetstream.Msg) {
	if err := msg.Ack(); err != nil {
		log.Warn("events: ack failed; the redelivery will be absorbed by the inbox", "err", err)
	}
}

// deliveries is how many times msg has been delivered, this time included.
func deliveries(msg jetstream.Msg) int {
	md, err := msg.Metadata()
	if err != nil {
		return 1
	}
	return int(md.NumDelivered)
}

// nakDelay doubles from nakBaseDelay with each delivery, up to nakMaxDelay.
func nakDelay(attempt int) time.Duration {
	d := nakBaseDelay
	for i := 1; i < attempt && d < nakMaxDelay; i++ {
		d *= 2
	}
	return min(d, nakMaxDelay)
}

// Subscribe delivers events of the given types published from now on, for per-process work such as
// cache invalidation: an ephemeral ordered consumer per context, no inbox and no acks, so every
// replica sees every event and a process that is down misses what happened meanwhile. fn is called
// for one event at a time. Stop with ctx or stop; stop waits for a call of fn in progress.
func (b Bus) Subscribe(ctx context.Context, types []eventsv1.Type, fn func(Event)) (stop func(), err error) {
	if fn == nil {
		return nil, errors.New("events: subscribe needs a function")
	}
	if len(types) == 0 {
		return nil, errors.New("events: no event types given")
	}
	byContext := map[string][]eventsv1.Type{}
	for _, t := range types {
		c, err := contextOf(t)
		if err != nil {
			return nil, err
		}
		byContext[c] = append(byContext[c], t)
	}
	var consumers []jetstream.Consumer
	for _, group := range byContext {
		stream, filter, err := b.filterFor(group)
		if err != nil {
			return nil, err
		}
		cons, err := b.JS.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{filter},
			DeliverPolicy:  jetstream.DeliverNewPolicy,
		})
		if err != nil {
			return nil, fmt.Errorf("events: subscribe to %s: %w", stream, err)
		}
		consumers = append(consumers, cons)
	}
	log := slog.Default()
	wanted := slices.Clone(types)
	var one sync.Mutex // serialises fn across the per-context consumers
	return b.run(ctx, consumers, log, func() {}, 1, func(_ context.Context, msgs []jetstream.Msg) {
		msg := msgs[0]
		ev, err := b.decodeMsg(msg)
		if err != nil {
			log.Warn("events: subscription skipped a message that is not a valid event", "subject", msg.Subject(), "err", err)
			return
		}
		if !slices.Contains(wanted, ev.Type) {
			return
		}
		one.Lock()
		defer one.Unlock()
		fn(ev)
	})
}

// run pulls messages from each consumer in its own goroutine and passes them to handle until ctx
// ends or the returned stop is called; stop cancels the ctx handle sees and waits for the goroutines.
// gone is called when the server says a consumer no longer exists. handle gets one message at a
// time, or with batch > 1 up to batch of those already pulled (never waiting for more).
func (b Bus) run(ctx context.Context, consumers []jetstream.Consumer, log *slog.Logger, gone func(), batch int, handle func(context.Context, []jetstream.Msg)) (func(), error) {
	iters := make([]jetstream.MessagesContext, 0, len(consumers))
	for _, cons := range consumers {
		it, err := cons.Messages()
		if err != nil {
			for _, started := range iters {
				started.Stop()
			}
			return nil, fmt.Errorf("events: start pulling: %w", err)
		}
		iters = append(iters, it)
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, it := range iters {
		cons := consumers[i]
		wg.Go(func() {
			<-runCtx.Done()
			it.Stop() // unblocks Next
		})
		msgs := make(chan jetstream.Msg, max(batch, 1))
		wg.Go(func() { handleFrom(runCtx, msgs, batch, handle) })
		wg.Go(func() {
			defer close(msgs)
			for {
				msg, err := it.Next()
				if err != nil {
					if errors.Is(err, jetstream.ErrMsgIteratorClosed) || runCtx.Err() != nil {
						return
					}
					if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
						// Someone deleted the consumer (or its stream): retrying cannot bring it back.
						log.Error("events: consumer is gone; no more messages", "err", err)
						gone()
						return
					}
					// Missed heartbeats and the like: the iterator recovers on its own, unless the
					// consumer was deleted while no pull was open to hear of it; ask the server.
					log.Warn("events: pulling messages", "err", err)
					if _, ierr := cons.Info(runCtx); errors.Is(ierr, jetstream.ErrConsumerNotFound) {
						log.Error("events: consumer is gone; no more messages", "err", ierr)
						gone()
						return
					}
					continue
				}
				msgs <- msg
			}
		})
	}
	return sync.OnceFunc(func() {
		cancel()
		wg.Wait()
	}), nil
}

// handleFrom passes the messages of msgs to handle until msgs is closed: one at a time, or with
// batch > 1 each with up to batch-1 more that are already waiting. Messages still waiting once ctx
// has ended are handed back to the server for another replica.
func handleFrom(ctx context.Context, msgs <-chan jetstream.Msg, batch int, handle func(context.Context, []jetstream.Msg)) {
	for msg := range msgs {
		if ctx.Err() != nil {
			_ = msg.Nak()
			continue
		}
		group := []jetstream.Msg{msg}
	more:
		for len(group) < batch {
			select {
			case next, ok := <-msgs:
				if !ok {
					break more
				}
				group = append(group, next)
			default:
				break more
			}
		}
		handle(ctx, group)
	}
}
