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

// TestAnEventContinuesTheTraceOfTheTransactionThatWroteIt follows the trace context from a state
// change through the outbox (Postgres and memory), the relay, a NATS message's headers and the
// consumer. A traced writer's traceparent is stored with the row, published as the message's
// header, and the handler runs in a consumer span whose parent is the writer's span; an untraced
// writer's row and message carry none, and the consumer's span is the root of a trace of its own.
func TestAnEventContinuesTheTraceOfTheTransactionThatWroteIt(t *testing.T) {
	rec := spans()
	for _, backend := range []string{"postgres", "memory"} {
		for _, traced := range []bool{true, false} {
			name := backend + "/untraced"
			if traced {
				name = backend + "/traced"
			}
			t.Run(name, func(t *testing.T) {
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
				writeCtx, wantParent := ctx, ""
				var writer trace.Span
				if traced {
					writeCtx, writer = otel.Tracer("test").Start(ctx, "state change")
					sc := writer.SpanContext()
					wantParent = "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
				}
				var src events.OutboxSource
				if backend == "postgres" {
					pool := pgPool(t)
					if err := pgxx.InTx(writeCtx, pool, func(ctx context.Context, tx pgx.Tx) error { return events.InsertOutbox(ctx, tx, ev) }); err != nil {
						t.Fatal(err)
					}
					var stored *string
					if err := pool.QueryRow(ctx, `select trace->>'traceparent' from outbox where id = $1`, ev.ID).Scan(&stored); err != nil {
						t.Fatal(err)
					}
					if got := deref(stored); got != wantParent {
						t.Fatalf("outbox row's traceparent = %q, want %q", got, wantParent)
					}
					src = events.NewPGOutbox(pool)
				} else {
					mem := &events.MemoryOutbox{}
					mem.Add(writeCtx, ev)
					src = mem
				}
				if writer != nil {
					writer.End()
				}
				if n, err := events.NewRelay("test", src, bus, nil).Flush(ctx); err != nil || n != 1 {
					t.Fatalf("Flush = %d, %v", n, err)
				}
				if got := publishedHeader(t, bus, identityv1.EventUserUpdated, "traceparent"); got != wantParent {
					t.Fatalf("message's traceparent header = %q, want %q", got, wantParent)
				}

				got := <-handled
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
				if consumerSpan.SpanKind() != trace.SpanKindConsumer || consumerSpan.Name() != "consume "+string(identityv1.EventUserUpdated) {
					t.Fatalf("the handler ran in span %q of kind %v, want the consumer's span", consumerSpan.Name(), consumerSpan.SpanKind())
				}
				if !traced {
					if consumerSpan.Parent().IsValid() {
						t.Fatalf("the consumer span of an untraced event has parent %s", consumerSpan.Parent().SpanID())
					}
					return
				}
				if got.TraceID() != writer.SpanContext().TraceID() || consumerSpan.Parent().SpanID() != writer.SpanContext().SpanID() {
					t.Fatalf("the consumer span is in trace %s under %s, want the writer's span %s of trace %s", got.TraceID(),
						consumerSpan.Parent().SpanID(), writer.SpanContext().SpanID(), writer.SpanContext().TraceID())
				}
			})
		}
	}
}

// publishedHeader is header of the last message published for typ.
func publishedHeader(t *testing.T, bus events.Bus, typ eventsv1.Type, header string) string {
	t.Helper()
	ctx := context.Background()
	c, err := events.ContextOf(typ)
	if err != nil {
		t.Fatal(err)
	}
	s, err := bus.JS.Stream(ctx, bus.Stream(c))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, bus.Subject(typ))
	if err != nil {
		t.Fatal(err)
	}
	return msg.Header.Get(header)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
