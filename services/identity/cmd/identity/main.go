// Command identity runs the identity service: gRPC on BERTH_GRPC_ADDR, PostgreSQL at
// BERTH_DATABASE_URL, events to NATS JetStream at BERTH_NATS_URL. Tokens carry BERTH_ISSUER as iss;
// the discovery document names endpoints under BERTH_PUBLIC_URL (the REST edge); sign-up creates
// tenants through the tenant service at BERTH_TENANT_GRPC_ADDR.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/services/identity/server"
)

// shutdownGrace is how long in-flight calls may take to finish after a stop signal.
const shutdownGrace = 15 * time.Second

func main() {
	log := logx.New(os.Stderr, config.String("BERTH_LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("identity stopped", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dbURL := config.String("BERTH_DATABASE_URL", "")
	if dbURL == "" {
		// Memory stores exist for the all-in-one development process only; a standalone service
		// without a database would lose everything on restart.
		return errors.New("BERTH_DATABASE_URL is required")
	}
	pepper, err := config.Bytes("BERTH_API_KEY_PEPPER")
	if err != nil {
		return err
	}
	secret, err := config.Bytes("BERTH_SECRET_KEY")
	if err != nil {
		return err
	}

	conn, err := natsx.Connect(config.String("BERTH_NATS_URL", "nats://127.0.0.1:4222"))
	if err != nil {
		return err
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}

	serviceToken := config.String("BERTH_SERVICE_TOKEN", "")
	tenantConn, err := grpcx.Dial(config.String("BERTH_TENANT_GRPC_ADDR", "127.0.0.1:9102"), serviceToken)
	if err != nil {
		return fmt.Errorf("tenant service: %w", err)
	}
	defer func() { _ = tenantConn.Close() }()

	svc, err := server.New(ctx, server.Config{
		DatabaseURL:  dbURL,
		Bus:          events.Bus{JS: js},
		Pepper:       pepper,
		SecretKey:    secret,
		AdminToken:   config.String("BERTH_ADMIN_TOKEN", ""),
		ServiceToken: serviceToken,
		Log:          log,
		Issuer:       config.String("BERTH_ISSUER", ""),
		PublicURL:    config.String("BERTH_PUBLIC_URL", "http://127.0.0.1:8080"),
		Tenant:       tenantConn,
	})
	if err != nil {
		return err
	}
	defer svc.Close()

	addr := config.String("BERTH_GRPC_ADDR", "127.0.0.1:9101")
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	errs := make(chan error, 2)
	go func() { errs <- svc.GRPC().Serve(lis) }()
	go func() { errs <- svc.Run(ctx) }()
	log.Info("identity serving", "addr", lis.Addr().String())

	select {
	case <-ctx.Done():
	case err := <-errs:
		if err != nil {
			return err
		}
	}
	log.Info("identity shutting down")
	drained := make(chan struct{})
	go func() { svc.GRPC().GracefulStop(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(shutdownGrace):
		svc.GRPC().Stop()
	}
	return nil
}
