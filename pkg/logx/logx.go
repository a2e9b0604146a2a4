// Package logx builds the slog logger every Berth process uses: JSON lines for collectors, or short
// text lines for a person at a terminal (BERTH_LOG_FORMAT). Records logged with a context carry
// that request's id and, when the request is traced, its trace and span ids, so one request can be
// followed across the edge and the services, and from a log line to its trace.
package logx

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/reqid"
)

// LevelSetting is the least severe level a process logs.
var LevelSetting = config.Setting{Name: "BERTH_LOG_LEVEL", Kind: config.Choice, Default: "info",
	Choices: []string{"debug", "info", "warn", "error"}, Doc: "the least severe log level written"}

// FormatSetting is how a process writes its log lines. auto is text only when a person is
// watching (both standard output and standard error are terminals, as under `make run`), so a
// process under a supervisor or piped into a collector writes JSON without being told.
var FormatSetting = config.Setting{Name: "BERTH_LOG_FORMAT", Kind: config.Choice, Default: "auto",
	Choices: []string{"auto", "text", "json"}, Doc: "log lines as text (for people) or json (for collectors); auto is text when standard output and standard error are terminals, else json"}

// New returns a JSON logger at level ("debug", "info", "warn", "error"; default info). Given an
// Output, it flushes the Output's queue with every record at warn or above.
func New(w io.Writer, level string) *slog.Logger {
	return newLogger(w, level, false)
}

// NewFormat is New in format ("auto", "text" or "json"); auto writes text when onTerminal.
func NewFormat(w io.Writer, level, format string, onTerminal bool) *slog.Logger {
	switch strings.ToLower(format) {
	case "text":
		return newLogger(w, level, true)
	case "json":
		return newLogger(w, level, false)
	default:
		return newLogger(w, level, onTerminal)
	}
}

// OnTerminal reports whether standard output and standard error are both terminals: format auto's
// test of whether a person reads the lines.
func OnTerminal() bool {
	return isTerminal(os.Stdout) && isTerminal(os.Stderr)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Duration is the one field every access line (HTTP and gRPC) gives its time in: milliseconds,
// with microseconds as the fraction, so fast calls do not all read 0.
func Duration(d time.Duration) slog.Attr {
	return slog.Float64("duration_ms", float64(d.Microseconds())/1000)
}

func newLogger(w io.Writer, level string, text bool) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	out, _ := w.(*Output)
	var h slog.Handler = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})
	if text {
		h = newTextHandler(w, l)
	}
	return slog.New(contextHandler{h, out})
}

// Flush writes out what log's Output (if it writes to one) still holds: a process calls it before
// it prints to standard output, so its lines and the print come in the order they happened.
func Flush(log *slog.Logger) error {
	if h, ok := log.Handler().(contextHandler); ok && h.out != nil {
		return h.out.Flush()
	}
	return nil
}

// contextHandler adds what the context says about the request to each record, and writes a
// batching Output's queue out with any record at warn or above.
type contextHandler struct {
	slog.Handler
	out *Output // nil when the logger writes straight through
}

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := reqid.From(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	err := h.Handler.Handle(ctx, r)
	if h.out != nil && r.Level >= slog.LevelWarn {
		if ferr := h.out.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h contextHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(as), h.out}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name), h.out}
}
