package logx

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

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
