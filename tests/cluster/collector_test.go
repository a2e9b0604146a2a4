package cluster

import (
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP trace receiver: the cluster's processes export their spans to it, as
// they would to an OpenTelemetry collector, so the test can see one trace cross processes.
type collector struct {
	srv   *http.Server
	url   string
	mu    sync.Mutex
	spans []span
}

// span is what the test reads of an exported span.
type span struct {
	service, traceID, name string
	kind                   tracepb.Span_SpanKind
}

func newCollector() (*collector, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &collector{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", c.receive)
	c.srv = &http.Server{Handler: mux}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

func (c *collector) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, span{service: service, traceID: hex.EncodeToString(s.GetTraceId()), name: s.GetName(), kind: s.GetKind()})
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// traces groups the spans received so far by trace.
func (c *collector) traces() map[string][]span {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]span{}
	for _, s := range c.spans {
		out[s.traceID] = append(out[s.traceID], s)
	}
	return out
}

func (c *collector) close() { _ = c.srv.Close() }
