package logx

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/reqid"
)

func TestRecordsCarryTheRequestIDOfTheirContext(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "info").With("service", "test")
	log.InfoContext(reqid.With(context.Background(), "req-1"), "hello")
	log.DebugContext(context.Background(), "hidden at info level")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("want exactly one JSON record, got %q: %v", buf.String(), err)
	}
	if rec["request_id"] != "req-1" || rec["service"] != "test" || rec["msg"] != "hello" {
		t.Fatalf("record = %v", rec)
	}
}

func TestALineLoggedInATracedRequestCarriesItsTraceAndSpanIDs(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "info")
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(reqid.With(context.Background(), "req-1"),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	log.InfoContext(ctx, "traced")
	log.InfoContext(context.Background(), "untraced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var traced, untraced map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &traced); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &untraced); err != nil {
		t.Fatal(err)
	}
	if traced["trace_id"] != tid.String() || traced["span_id"] != sid.String() || traced["request_id"] != "req-1" {
		t.Errorf("traced line = %v", traced)
	}
	if _, ok := untraced["trace_id"]; ok {
		t.Errorf("a line without a trace names one: %v", untraced)
	}
}
