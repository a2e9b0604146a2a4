// Command sandbox serves the provider sandboxes alone, for people integrating against Berth and for
// the compose deployment:
//
//	BERTH_SANDBOX_ADDR        listen address (default 127.0.0.1:8090)
//	BERTH_SANDBOX_PUBLIC_URL  the URL browsers reach it at (default http://<listen address>)
//	BERTH_SANDBOX_TIME_SCALE  factor on the webhook retry schedules (default 1; 0.0001 makes
//	                          pspx's one-minute first retry come after 6 ms)
package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/berthhq/berth/services/sandbox/mount"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("sandbox stopped", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	addr := env("BERTH_SANDBOX_ADDR", "127.0.0.1:8090")
	scale, err := mount.ParseTimeScale(os.Getenv("BERTH_SANDBOX_TIME_SCALE"))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	sb := mount.NewWithOptions(env("BERTH_SANDBOX_PUBLIC_URL", "http://"+ln.Addr().String()), log, mount.Options{TimeScale: scale})
	defer sb.Close()
	mux := http.NewServeMux()
	sb.Register(mux)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("sandboxes listening", "pspx", sb.PspxURL, "pspy", sb.PspyURL, "clock", "POST "+mount.ClockPath,
		"faults", mount.FaultsPath, "deliveries", mount.DeliveriesPath, "timeScale", scale)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
