// Command sandbox serves the provider sandboxes alone, for people integrating against Berth and for
// the compose deployment; its settings are mount.Settings (docs/configuration.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/services/sandbox/mount"
)

func main() {
	settings, err := config.Parse(config.OS, mount.Settings)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: refusing to start, its settings are wrong:\n%v\n", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(log, settings); err != nil {
		log.Error("sandbox stopped", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, settings config.Values) error {
	scale := settings.Float(mount.TimeScaleSetting.Name)
	ln, err := net.Listen("tcp", settings.String("BERTH_SANDBOX_ADDR"))
	if err != nil {
		return err
	}
	public := settings.String("BERTH_SANDBOX_PUBLIC_URL")
	if public == "" {
		public = "http://" + ln.Addr().String()
	}
	sb := mount.NewWithOptions(public, log, mount.Options{TimeScale: scale})
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
