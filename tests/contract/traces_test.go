package contract

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/tracing"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// traceRecorder keeps the ended spans of the traces a test asks for, and drops every other span
// the suite makes.
type traceRecorder struct {
	mu     sync.Mutex
	wanted map[trace.TraceID]bool
	spans  []sdktrace.ReadOnlySpan
}

func (r *traceRecorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (r *traceRecorder) Shutdown(context.Context) error                  { return nil }
func (r *traceRecorder) ForceFlush(context.Context) error                { return nil }
func (r *traceRecorder) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wanted[s.SpanContext().TraceID()] {
		r.spans = append(r.spans, s)
	}
}

func (r *traceRecorder) watch(id trace.TraceID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wanted[id] = true
}

func (r *traceRecorder) of(id trace.TraceID) []sdktrace.ReadOnlySpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans {
		if s.SpanContext().TraceID() == id {
			out = append(out, s)
		}
	}
	return out
}

// recorder is the suite's one tracer provider: the global provider delegates to the first one set.
var recorder = sync.OnceValue(func() *traceRecorder {
	r := &traceRecorder{wanted: map[trace.TraceID]bool{}}
	tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r)))
	return r
})

// TestOneTraceSpansTheEdgeTheServiceAndTheConsumerOfItsEvent sends route 17 with a W3C
// traceparent and finds, in that one trace, the edge's span (a child of the caller's), the tenant
// service's span under it, and under that the span of a consumer applying the tenant.updated
// event the change wrote.
func TestOneTraceSpansTheEdgeTheServiceAndTheConsumerOfItsEvent(t *testing.T) {
	rec := recorder()
	e := start(t, "postgres")
	traceID, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	callerSpan, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	rec.watch(traceID)
	headers := e.write()
	headers["traceparent"] = "00-" + traceID.String() + "-" + callerSpan.String() + "-01"
	e.do("PUT", "/v1/tenants/"+e.demo.TenantID, headers, `{"kind":"tenant","name":"Traced"}`).ok(t, 200)

	consume := "consume " + string(tenantv1.EventTenantUpdated)
	var spans []sdktrace.ReadOnlySpan
	testkit.Eventually(t, "the event's consumer span is in the trace", func() bool {
		spans = rec.of(traceID)
		for _, s := range spans {
			if s.Name() == consume {
				return true
			}
		}
		return false
	})
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	// chain is s's line of parents inside the trace, s first, up to the caller's span (ok) or to a
	// parent the trace does not hold.
	chain := func(s sdktrace.ReadOnlySpan) (ids []trace.SpanID, names []string, ok bool) {
		for {
			ids, names = append(ids, s.SpanContext().SpanID()), append(names, s.Name())
			parent := s.Parent().SpanID()
			if parent == callerSpan {
				return ids, names, true
			}
			next, found := byID[parent]
			if !found {
				return ids, names, false
			}
			s = next
		}
	}
	var edge trace.SpanID
	found := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		switch {
		case s.SpanKind() == trace.SpanKindServer && s.Name() == "PUT /berth.tenant.v1.TenantService/UpdateTenant":
			found["edge"], edge = s, s.SpanContext().SpanID()
		case s.SpanKind() == trace.SpanKindServer && s.Name() == "/berth.tenant.v1.TenantService/UpdateTenant":
			found["service"] = s
		case s.SpanKind() == trace.SpanKindConsumer && s.Name() == consume:
			found["consumer"] = s
		}
	}
	if found["edge"] == nil || found["service"] == nil || found["consumer"] == nil {
		var names []string
		for _, s := range spans {
			names = append(names, s.SpanKind().String()+" "+s.Name())
		}
		t.Fatalf("trace holds %v, want the edge, the tenant service and the event's consumer", names)
	}
	// The edge's span continues the caller's; the service's and the consumer's lead back to it, the
	// consumer's through the service's, in which the change and its event were written.
	for _, what := range []string{"edge", "service", "consumer"} {
		ids, names, ok := chain(found[what])
		if !ok || !slices.Contains(ids, edge) {
			t.Errorf("the %s's span does not descend from the edge's span and the caller's: %s", what, strings.Join(names, " <- "))
		}
		if what == "consumer" && !slices.Contains(ids, found["service"].SpanContext().SpanID()) {
			t.Errorf("the consumer's span does not descend from the service's: %s", strings.Join(names, " <- "))
		}
	}
}
