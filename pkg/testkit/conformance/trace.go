package conformance

import (
	"context"
	"crypto/rand"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/tracing"
)

// Traced returns ctx inside a sampled span of a trace of its own, and the W3C traceparent that
// names that span: what the events of a state change made in ctx must carry, so that their
// consumers continue the change's trace.
//
// Tracing is turned on for the test binary if it is not yet (stores carry the context only then).
func Traced(ctx context.Context) (context.Context, string) {
	if !tracing.On() {
		tracing.Use(sdktrace.NewTracerProvider())
	}
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(ctx, sc), "00-" + tid.String() + "-" + sid.String() + "-01"
}

// Traceparents maps the id of each event pending in outbox to the traceparent it carries, "" for
// none.
func Traceparents(t *testing.T, outbox events.OutboxSource) map[string]string {
	t.Helper()
	evs, err := outbox.Pending(context.Background(), 1000)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	out := map[string]string{}
	for _, ev := range evs {
		out[ev.ID] = ev.Trace["traceparent"]
	}
	return out
}
