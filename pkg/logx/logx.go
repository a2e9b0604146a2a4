// Package logx builds the JSON slog logger every Berth process uses. Records logged with a context
// carry that request's id and, when the request is traced, its trace and span ids, so one request
// can be followed across the edge and the services, and from a log line to its trace.
package logx

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/reqid"
)

// LevelSetting is the least severe level a process logs.
var LevelSetting = config.Setting{Name: "BERTH_LOG_LEVEL", Kind: config.Choice, Default: "info",
	Choices: []string{"debug", "info", "warn", "error"}, Doc: "the least severe log level written"}

// New returns a JSON logger at level ("debug", "info", "warn", "error"; default info). Given an
// Output, it flushes the Output's queue with every record at warn or above.
func New(w io.Writer, level string) *slog.Logger {
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
	return slog.New(contextHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}), out})
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
