// Command gateway runs Berth's REST edge as its own process in front of the identity and tenant
// services.
//
// Environment:
//
//	BERTH_HTTP_ADDR      listen address (default 127.0.0.1:8080)
//	BERTH_IDENTITY_ADDR  host:port of the identity service's gRPC server (required)
//	BERTH_TENANT_ADDR    host:port of the tenant service's gRPC server (required)
//
// The gRPC connections use insecure transport for now: services are reached on a private network.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/berthhq/berth/gateway/edge"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGINT/SIGTERM.
const shutdownGrace = 15 * time.Second

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("gateway stopped", slog.String("error", err.Error()))
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	addr := envOr("BERTH_HTTP_ADDR", "127.0.0.1:8080")
	identity, err := dial("BERTH_IDENTITY_ADDR")
	if err != nil {
		return err
	}
	defer func() { _ = identity.Close() }()
	tenant, err := dial("BERTH_TENANT_ADDR")
	if err != nil {
		return err
	}
	defer func() { _ = tenant.Close() }()

	handler, err := edge.New(ctx, edge.Backends{Identity: identity, Tenant: tenant}, log)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}

	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	log.Info("gateway listening", slog.String("addr", addr))

	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	log.Info("gateway shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", addr, err)
	}
	return nil
}

// dial opens a lazy client connection to the gRPC address named by env; it does not wait for the
// service, so the edge can start before its backends.
func dial(env string) (*grpc.ClientConn, error) {
	target := os.Getenv(env)
	if target == "" {
		return nil, fmt.Errorf("%s is required (host:port of the gRPC service)", env)
	}
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", env, target, err)
	}
	return cc, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
