package contract

import (
	"context"
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
// traceparent and finds, in that one trace, the edge's span, the tenant service's span and the
// span of analytics applying the tenant.updated event the change wrote, each a descendant of the
// caller's span.
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
	// descends reports whether s's parents lead to the caller's span, and through which spans.
	descends := func(s sdktrace.ReadOnlySpan) (bool, []string) {
		var path []string
		for {
			path = append(path, s.Name())
			parent := s.Parent().SpanID()
			if parent == callerSpan {
				return true, path
			}
			next, ok := byID[parent]
			if !ok {
				return false, path
			}
			s = next
		}
	}
	found := map[string]bool{}
	for _, s := range spans {
		switch {
		case s.SpanKind() == trace.SpanKindServer && s.Name() == "PUT /berth.tenant.v1.TenantService/UpdateTenant":
			found["edge"] = true
		case s.SpanKind() == trace.SpanKindServer && s.Name() == "/berth.tenant.v1.TenantService/UpdateTenant":
			found["service"] = true
		case s.SpanKind() == trace.SpanKindConsumer && s.Name() == consume:
			found["consumer"] = true
		default:
			continue
		}
		if ok, path := descends(s); !ok {
			t.Errorf("span %q does not descend from the caller's span: %s", s.Name(), strings.Join(path, " <- "))
		}
	}
	if !found["edge"] || !found["service"] || !found["consumer"] {
		var names []string
		for _, s := range spans {
			names = append(names, s.SpanKind().String()+" "+s.Name())
		}
		t.Fatalf("trace holds %v, want the edge, the tenant service and the event's consumer", names)
	}
}
