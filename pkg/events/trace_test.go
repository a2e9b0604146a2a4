package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/tracing"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// spans records every span of this test binary. The global provider is set once: tracers handed
// out before it delegate to the first provider installed.
var spans = sync.OnceValue(func() *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	return rec
})

// TestAnEventContinuesTheTraceOfTheTransactionThatWroteIt follows the trace context from a traced
// state change through the outbox (Postgres and memory), the relay, a NATS message's headers and
// the consumer: the handler runs in a consumer span whose parent is the writer's span.
func TestAnEventContinuesTheTraceOfTheTransactionThatWroteIt(t *testing.T) {
	rec := spans()
	for _, backend := range []string{"postgres", "memory"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			bus, _ := natstest.New(t)
			handled := make(chan trace.SpanContext, 1)
			c, err := bus.Consume(ctx, events.ConsumerConfig{
				Durable: "traced", Types: []eventsv1.Type{identityv1.EventUserUpdated}, Inbox: events.NewMemoryInbox(),
				Handler: func(ctx context.Context, _ events.Event) error {
					handled <- trace.SpanContextFromContext(ctx)
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()

			ev := newEvent(t, identityv1.EventUserUpdated, "u1")
			writeCtx, writer := otel.Tracer("test").Start(ctx, "state change")
			var src events.OutboxSource
			if backend == "postgres" {
				pool := pgPool(t)
				if err := pgxx.InTx(writeCtx, pool, func(ctx context.Context, tx pgx.Tx) error { return events.InsertOutbox(ctx, tx, ev) }); err != nil {
					t.Fatal(err)
				}
				src = events.NewPGOutbox(pool)
			} else {
				mem := &events.MemoryOutbox{}
				mem.Add(writeCtx, ev)
				src = mem
			}
			writer.End()
			if n, err := events.NewRelay("test", src, bus, nil).Flush(ctx); err != nil || n != 1 {
				t.Fatalf("Flush = %d, %v", n, err)
			}
			got := <-handled
			if got.TraceID() != writer.SpanContext().TraceID() {
				t.Fatalf("the handler ran in trace %s, want the writer's %s", got.TraceID(), writer.SpanContext().TraceID())
			}
			var consumerSpan sdktrace.ReadOnlySpan
			eventually(t, "the consumer span has ended", func() bool {
				for _, s := range rec.Ended() {
					if s.SpanContext().SpanID() == got.SpanID() {
						consumerSpan = s
						return true
					}
				}
				return false
			})
			if consumerSpan.SpanKind() != trace.SpanKindConsumer || consumerSpan.Parent().SpanID() != writer.SpanContext().SpanID() ||
				consumerSpan.Name() != "consume "+string(identityv1.EventUserUpdated) {
				t.Fatalf("consumer span %q kind %v parent %s, want a consumer span under the writer's %s",
					consumerSpan.Name(), consumerSpan.SpanKind(), consumerSpan.Parent().SpanID(), writer.SpanContext().SpanID())
			}
		})
	}
}

// TestAnUntracedEventReachesTheConsumerWithoutATraceContext keeps an untraced event's row and message
// free of trace headers: the consumer's span is a root.
func TestAnUntracedEventReachesTheConsumerWithoutATraceContext(t *testing.T) {
	spans()
	mem := &events.MemoryOutbox{}
	mem.Add(context.Background(), newEvent(t, identityv1.EventUserUpdated, "u1"))
	evs, err := mem.Pending(context.Background(), 10)
	if err != nil || len(evs) != 1 || evs[0].Trace != nil {
		t.Fatalf("pending = %+v, %v; want one event without a trace", evs, err)
	}
}

// logLines is a log sink the consumer's goroutines may write to while the test reads it.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// find returns the first JSON line whose msg is msg.
func (l *logLines) find(msg string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for line := range strings.SplitSeq(l.buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	return nil
}

// TestAFailedEventIsLoggedWithTheTraceItContinued logs a handler's failure with the trace and
// span ids of the consumer's span, so the line leads to the trace of the change that wrote the
// event.
func TestAFailedEventIsLoggedWithTheTraceItContinued(t *testing.T) {
	rec := spans()
	ctx := context.Background()
	bus, _ := natstest.New(t)
	logs := &logLines{}
	var calls atomic.Int32
	c, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: "failing", Types: []eventsv1.Type{identityv1.EventUserUpdated}, Inbox: events.NewMemoryInbox(),
		Log: logx.New(logs, "info"),
		Handler: func(context.Context, events.Event) error {
			if calls.Add(1) == 1 {
				return errors.New("projection unavailable")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()

	writeCtx, writer := otel.Tracer("test").Start(ctx, "state change")
	mem := &events.MemoryOutbox{}
	mem.Add(writeCtx, newEvent(t, identityv1.EventUserUpdated, "u1"))
	writer.End()
	if n, err := events.NewRelay("test", mem, bus, nil).Flush(ctx); err != nil || n != 1 {
		t.Fatalf("Flush = %d, %v", n, err)
	}
	const failed = "events: handler failed; the event will be redelivered"
	var line map[string]any
	eventually(t, "the failure is logged", func() bool {
		line = logs.find(failed)
		return line != nil
	})
	var failedSpan sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanContext().SpanID().String() == line["span_id"] {
			failedSpan = s
		}
	}
	if line["trace_id"] != writer.SpanContext().TraceID().String() || failedSpan == nil ||
		failedSpan.SpanKind() != trace.SpanKindConsumer || failedSpan.Status().Code != codes.Error {
		t.Fatalf("failure logged as %v, want the trace %s and the failed consumer span's id", line, writer.SpanContext().TraceID())
	}
}
