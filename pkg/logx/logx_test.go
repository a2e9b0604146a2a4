package logx

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

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

// countingWriter records each write it receives.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *countingWriter) snapshot() (writes int, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.writes), strings.Join(c.writes, "")
}

func TestABatchingOutputWritesManyLinesInOneWriteWithinItsDelay(t *testing.T) {
	var w countingWriter
	log := New(NewOutput(&w), "info")
	for i := range 100 {
		log.Info("line", "i", i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, text := w.snapshot()
		if lines := strings.Count(text, "\n"); lines == 100 {
			if n > 10 { // one write, or a few if the logging itself outlasted the delay
				t.Fatalf("100 lines took %d writes", n)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s %d of 100 lines were written", strings.Count(text, "\n"))
		}
		time.Sleep(FlushDelay / 5)
	}
}

func TestAWarningIsWrittenAtOnceWithTheLinesBeforeIt(t *testing.T) {
	var w countingWriter
	log := New(NewOutput(&w), "info").With("service", "test")
	log.Info("first")
	log.Warn("trouble")
	n, text := w.snapshot()
	if n != 1 || !strings.Contains(text, `"msg":"first"`) || !strings.Contains(text, `"msg":"trouble"`) ||
		strings.Index(text, "first") > strings.Index(text, "trouble") {
		t.Fatalf("after a warning: %d writes, %q; want one write holding both lines in order", n, text)
	}
}

func TestABatchingOutputKeepsConcurrentLinesWholeAndFlushWritesTheRest(t *testing.T) {
	var w countingWriter
	out := NewOutput(&w)
	log := New(out, "info")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				log.Info("concurrent line with some text to fill the batch", "g", g, "i", i)
			}
		})
	}
	wg.Wait()
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	n, text := w.snapshot()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 4000 {
		t.Fatalf("%d lines written, want 4000", len(lines))
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("a line is not one whole record: %q", l)
		}
	}
	if n >= len(lines)/10 {
		t.Fatalf("4000 lines took %d writes", n)
	}
}
