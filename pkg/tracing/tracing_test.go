package tracing

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestTracingIsOnOnlyWithAnOTLPEndpointAndTheSDKEnabled(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{"only a service name", map[string]string{"OTEL_SERVICE_NAME": "identity"}, false},
		{"SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{"SDK disabled false", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "false"}, true},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	}
	for _, c := range cases {
		if got := Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%s: Enabled = %v, want %v", c.name, got, c.want)
		}
	}
}

// unsetOTEL clears the variables Enabled reads for the test's duration.
func unsetOTEL(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED",
		"OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER"} {
		t.Setenv(k, "")
	}
}

func TestSetupWithoutAnEndpointInstallsNoProvider(t *testing.T) {
	unsetOTEL(t)
	before := otel.GetTracerProvider()
	shutdown, err := Setup(context.Background(), "identity")
	if err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != before {
		t.Fatal("Setup installed a tracer provider with tracing off")
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown = %v", err)
	}
}

// receiver is an OTLP/HTTP trace endpoint that keeps what it is sent.
type receiver struct {
	mu    sync.Mutex
	spans []exported
}

type exported struct {
	service string
	span    *tracepb.Span
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || err != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				rc.spans = append(rc.spans, exported{service, s})
			}
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (rc *receiver) take() []exported {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.spans
	rc.spans = nil
	return out
}

// TestSetupExportsOverOTLPUnderTheServiceName exports, through the endpoint the standard variable
// names, a span continuing the W3C traceparent a caller sent (same trace, the caller's span its
// parent) under the process's service name, and a later provider's spans under OTEL_SERVICE_NAME
// when that is set. Shutdown flushes the batch. Spans come from the provider Setup installed,
// never from a tracer taken earlier, which would delegate to the first provider of the binary.
func TestSetupExportsOverOTLPUnderTheServiceName(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	unsetOTEL(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)

	shutdown, err := Setup(context.Background(), "gateway")
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	ctx := otel.GetTextMapPropagator().Extract(context.Background(), propagation.HeaderCarrier(h))
	_, span := otel.Tracer("test").Start(ctx, "PUT /berth.tenant.v1.TenantService/UpdateTenant")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown = %v", err)
	}
	got := rc.take()
	if len(got) != 1 {
		t.Fatalf("exported %d spans, want 1", len(got))
	}
	s := got[0].span
	if got[0].service != "gateway" || hex.EncodeToString(s.GetTraceId()) != "0af7651916cd43dd8448eb211c80319c" ||
		hex.EncodeToString(s.GetParentSpanId()) != "b7ad6b7169203331" {
		t.Fatalf("exported span of %q: %v", got[0].service, s)
	}

	t.Setenv("OTEL_SERVICE_NAME", "edge-eu")
	shutdown, err = Setup(context.Background(), "gateway")
	if err != nil {
		t.Fatal(err)
	}
	_, other := otel.Tracer("test").Start(context.Background(), "work")
	other.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown = %v", err)
	}
	if got := rc.take(); len(got) != 1 || got[0].service != "edge-eu" {
		t.Fatalf("exported %+v, want one span of service edge-eu", got)
	}
}
