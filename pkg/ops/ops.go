// Package ops serves a process's operational endpoints: /healthz (liveness: the process answers
// HTTP), /readyz (readiness: what the process depends on answers, so it may take traffic) and
// /metrics (Prometheus, the process's default registry). Production processes serve them on their
// ops address (BERTH_OPS_ADDR); the all-in-one process on its HTTP address. None of them carries
// secrets or personal data, and /readyz names only which dependency failed.
package ops

import (
	"context"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/berthhq/berth/pkg/config"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Paths of the endpoints.
const (
	HealthPath  = "/healthz"
	ReadyPath   = "/readyz"
	MetricsPath = "/metrics"
)

// readyTimeout bounds a readiness check, so a hung dependency makes the probe fail, not hang.
const readyTimeout = 3 * time.Second

// AddrVar is the variable of the ops endpoints' own address in the production processes.
const AddrVar = "BERTH_OPS_ADDR"

// PprofVar turns the Go profiler on at /debug/pprof/ of the same address when "true". It is off by
// default: profiles expose internals and cost CPU, so they are for a measuring session, not for
// every deployment.
const PprofVar = "BERTH_PPROF"

// PprofSetting declares PprofVar.
var PprofSetting = config.Setting{Name: PprofVar, Kind: config.Flag, Default: "false",
	Doc: "serve the Go profiler at /debug/pprof/ on the ops address (for a measuring session, not for every deployment)"}

// Mount adds the three endpoints to mux (and the profiler when profiler is true); ready reports why
// the process is not ready, or nil.
func Mount(mux *http.ServeMux, ready func(ctx context.Context) error, profiler bool) {
	if profiler {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := ready(ctx); err != nil {
			write(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		write(w, http.StatusOK, "ready")
	})
	mux.Handle("GET "+MetricsPath, promhttp.Handler())
}

// Handler is a mux with only the three endpoints.
func Handler(ready func(ctx context.Context) error, profiler bool) http.Handler {
	mux := http.NewServeMux()
	Mount(mux, ready, profiler)
	return mux
}

func write(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body + "\n"))
}
