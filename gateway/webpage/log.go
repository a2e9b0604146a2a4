package webpage

import (
	"log/slog"
	"net/http"
)

// LogFailure records why a page's request failed where the visitor is only shown a generic card: at
// error, as a fault of Berth's, under the request id (pkg/logx adds it from the context) that the
// card shows as its reference. A request whose visitor left while it ran (a closed tab, a reload, a
// second click) failed because of that: its backend call answers Canceled and nobody saw the card,
// so it is a debug line only; the edge logs the request once at info as canceled by the client and
// counts it apart from failures. Never pass an err that may hold a password, code or token.
func LogFailure(log *slog.Logger, r *http.Request, msg string, err error) {
	level := slog.LevelError
	if r.Context().Err() != nil {
		level = slog.LevelDebug
	}
	log.LogAttrs(r.Context(), level, msg, slog.String("error", err.Error()))
}
