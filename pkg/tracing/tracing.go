package tracing

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of Berth's own spans.
const tracerName = "github.com/berthhq/berth"

// on is whether the process traces (Setup found an endpoint, or Use installed a provider). Off,
// every function here returns at once, so an untraced process pays nothing per request.
var on atomic.Bool

// noSpan is what the functions return when tracing is off.
var noSpan = trace.SpanFromContext(context.Background())

// On reports whether the process traces. gRPC servers and clients built while it is off carry no
// trace instrumentation.
func On() bool { return on.Load() }

// Use makes tp the process's tracer provider and turns tracing on, with W3C trace context and
// baggage propagation: what Setup does with its exporter, and what tests do with a recorder.
func Use(tp trace.TracerProvider) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	otel.SetTracerProvider(tp)
	on.Store(true)
}

// Enabled reports whether the environment asks for export: an OTLP endpoint is set and the SDK
// is not disabled.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the process's tracer provider when Enabled: an OTLP/HTTP exporter configured by
// the OTEL_EXPORTER_OTLP_* variables, batched, with service.name from OTEL_SERVICE_NAME or
// service, and the sampler from OTEL_TRACES_SAMPLER (parent-based, always on, by default). The
// returned shutdown flushes what is buffered; it is a no-op when tracing is off.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	if !Enabled(os.Getenv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// WithFromEnv after the default name: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
	if envRes, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, envRes); err == nil {
			res = merged
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	return tp.Shutdown, nil
}

// Start is Setup for a process's main: stop flushes the spans still buffered, waiting at most
// five seconds, so a collector that is gone cannot hold the exit up.
func Start(ctx context.Context, service string) (stop func(), err error) {
	shutdown, err := Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	return func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = shutdown(flushCtx)
	}, nil
}

func tracer() trace.Tracer { return otel.Tracer(tracerName) }

// Edge starts the server span of a REST request, continuing the trace its traceparent header
// names. The route is known only once the request is routed: EndHTTP names it.
func Edge(r *http.Request) (context.Context, trace.Span) {
	if !On() {
		return r.Context(), noSpan
	}
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return tracer().Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method)))
}

// EndHTTP names span after route (the matched route, never the raw path, which holds ids),
// records the answer's status and ends it; a 5xx marks the span failed.
func EndHTTP(span trace.Span, method, route string, status int) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// Carrier is a trace context in its W3C text form (traceparent, tracestate, baggage), as an
// outbox row and a NATS message carry it.
type Carrier map[string]string

// Inject returns ctx's trace context; nil when ctx carries none.
func Inject(ctx context.Context) Carrier {
	if !On() || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return Carrier(c)
}

// Fields are the header names a Carrier may hold.
func Fields() []string { return otel.GetTextMapPropagator().Fields() }

// Consume starts the span of applying one event, a child of the trace the event was written in
// (c, nil when it carries none): the consumer's work and its own calls join that trace.
func Consume(ctx context.Context, c Carrier, consumer, eventType string) (context.Context, trace.Span) {
	if !On() {
		return ctx, noSpan
	}
	if len(c) > 0 {
		ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.MapCarrier(c))
	}
	return tracer().Start(ctx, "consume "+eventType, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.consumer.group.name", consumer),
			attribute.String("messaging.message.type", eventType)))
}

// End ends span, marking it failed with err when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// InProcess starts the server span of a call a process makes to itself without the network
// (grpcx.Local), a child of the caller's span; the caller puts it in the handler's context, which
// carries none of the caller's values.
func InProcess(caller context.Context, method string) trace.Span {
	if !On() {
		return noSpan
	}
	_, span := tracer().Start(caller, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "grpc"), attribute.String("rpc.method", method)))
	return span
}
