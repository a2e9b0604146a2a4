package logx

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/reqid"
)

func TestTheFormatSettingChoosesTextOnlyForAPersonOrWhenAskedFor(t *testing.T) {
	for _, c := range []struct {
		format     string
		onTerminal bool
		wantJSON   bool
	}{
		{"auto", true, false},
		{"auto", false, true},
		{"", false, true},
		{"text", false, false},
		{"TEXT", false, false},
		{"json", true, true},
	} {
		var buf bytes.Buffer
		NewFormat(&buf, "info", c.format, c.onTerminal).Info("hello", "k", "v")
		isJSON := json.Valid(bytes.TrimSpace(buf.Bytes()))
		if isJSON != c.wantJSON {
			t.Errorf("format %q on a terminal %v wrote %q; want JSON %v", c.format, c.onTerminal, buf.String(), c.wantJSON)
		}
	}
}

func TestATextLineHasTimeLevelMessageAndQuotedFields(t *testing.T) {
	var buf bytes.Buffer
	log := NewFormat(&buf, "info", "text", false).With("service", "identity").WithGroup("call")
	log.InfoContext(reqid.With(context.Background(), "req-1"), "grpc", "method", "/x.Y/Z", "why", "no such app", Duration(1500*time.Microsecond))
	log.Debug("hidden at info level")
	line := buf.String()
	want := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} INFO  grpc service=identity call\.method=/x\.Y/Z call\.why="no such app" call\.duration_ms=1\.5 call\.request_id=req-1\n$`)
	if !want.MatchString(line) {
		t.Fatalf("text line = %q", line)
	}
}

func TestConcurrentTextRecordsStayWholeLines(t *testing.T) {
	var buf bytes.Buffer
	log := NewFormat(&buf, "info", "text", false)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				log.Info("line", "g", g, "i", i)
			}
		}()
	}
	for range 4 {
		<-done
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if strings.Count(l, "INFO") != 1 {
			t.Fatalf("a line is not one record: %q", l)
		}
	}
}

func TestDurationIsMillisecondsWithMicrosecondFraction(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{{0, 0}, {420 * time.Microsecond, 0.42}, {273 * time.Millisecond, 273}, {1500 * time.Nanosecond, 0.001}} {
		a := Duration(c.d)
		if a.Key != "duration_ms" || a.Value.Kind() != slog.KindFloat64 || a.Value.Float64() != c.want {
			t.Errorf("Duration(%v) = %v, want duration_ms=%v", c.d, a, c.want)
		}
	}
}
