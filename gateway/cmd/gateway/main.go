// Command gateway runs Berth's REST edge (and the hosted login page) as its own process in front of
// the identity, tenant and analytics services.
//
// Environment:
//
//	BERTH_HTTP_ADDR       listen address (default 127.0.0.1:8080)
//	BERTH_IDENTITY_ADDR   host:port of the identity service's gRPC server (required)
//	BERTH_TENANT_ADDR     host:port of the tenant service's gRPC server (required)
//	BERTH_ANALYTICS_ADDR  host:port of the analytics service's gRPC server (required)
//	BERTH_SERVICE_TOKEN   service-to-service token (required): the login page calls identity's
//	                      LoginService, which only Berth services may call
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

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGINT/SIGTERM.
const shutdownGrace = 15 * time.Second

func main() {
	log := logx.New(os.Stderr, envOr("BERTH_LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("gateway stopped", slog.String("error", err.Error()))
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	addr := envOr("BERTH_HTTP_ADDR", "127.0.0.1:8080")
	serviceToken := os.Getenv("BERTH_SERVICE_TOKEN")
	if serviceToken == "" {
		return errors.New("BERTH_SERVICE_TOKEN is required (the login page calls identity's service-only LoginService)")
	}
	identity, err := dial("BERTH_IDENTITY_ADDR", serviceToken)
	if err != nil {
		return err
	}
	defer func() { _ = identity.Close() }()
	tenant, err := dial("BERTH_TENANT_ADDR", "")
	if err != nil {
		return err
	}
	defer func() { _ = tenant.Close() }()
	analytics, err := dial("BERTH_ANALYTICS_ADDR", "")
	if err != nil {
		return err
	}
	defer func() { _ = analytics.Close() }()

	proxies, err := login.ParseProxies(os.Getenv("BERTH_TRUSTED_PROXIES"))
	if err != nil {
		return fmt.Errorf("BERTH_TRUSTED_PROXIES: %w", err)
	}
	handler, err := edge.New(ctx, edge.Backends{Identity: identity, Tenant: tenant, Analytics: analytics}, log, edge.WithTrustedProxies(proxies))
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
// service, so the edge can start before its backends. The connection forwards the request id and,
// when serviceToken is set, authenticates as a Berth service. Only identity needs the token (for
// LoginService); it grants nothing on the routes the edge forwards for API clients.
func dial(env, serviceToken string) (*grpc.ClientConn, error) {
	target := os.Getenv(env)
	if target == "" {
		return nil, fmt.Errorf("%s is required (host:port of the gRPC service)", env)
	}
	cc, err := grpcx.Dial(target, serviceToken)
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
