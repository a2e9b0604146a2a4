// Command analytics runs the analytics service as its own process against PostgreSQL, NATS
// JetStream and the identity service. Configuration comes from the environment:
//
//	BERTH_DATABASE_URL   PostgreSQL URL (required)
//	BERTH_GRPC_ADDR      listen address (default 127.0.0.1:9103)
//	BERTH_NATS_URL       NATS server (default nats://127.0.0.1:4222)
//	BERTH_IDENTITY_ADDR  identity service gRPC address (default 127.0.0.1:9101)
//	BERTH_ADMIN_TOKEN    token of provisioning calls ("" disables them; analytics has none yet)
//	BERTH_SERVICE_TOKEN  token between Berth services
//	BERTH_LOG_LEVEL      debug, info, warn or error (default info)
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

	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/services/analytics/server"
)

func main() {
	log := logx.New(os.Stderr, config.String("BERTH_LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("analytics service stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	dbURL := config.String("BERTH_DATABASE_URL", "")
	if dbURL == "" {
		return errors.New("BERTH_DATABASE_URL is required")
	}
	nc, err := natsx.Connect(config.String("BERTH_NATS_URL", "nats://127.0.0.1:4222"))
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	bus := events.Bus{JS: js}
	if err := bus.EnsureStreams(ctx); err != nil {
		return fmt.Errorf("ensure streams: %w", err)
	}
	serviceToken := config.String("BERTH_SERVICE_TOKEN", "")
	identityConn, err := grpcx.Dial(config.String("BERTH_IDENTITY_ADDR", "127.0.0.1:9101"), serviceToken)
	if err != nil {
		return fmt.Errorf("identity connection: %w", err)
	}
	defer identityConn.Close()

	svc, err := server.New(ctx, server.Config{
		DatabaseURL:  dbURL,
		Bus:          bus,
		Identity:     identityConn,
		AdminToken:   config.String("BERTH_ADMIN_TOKEN", ""),
		ServiceToken: serviceToken,
		Log:          log,
	})
	if err != nil {
		return err
	}
	defer svc.Close()

	addr := config.String("BERTH_GRPC_ADDR", "127.0.0.1:9103")
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- svc.Run(ctx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- svc.GRPC().Serve(lis) }()
	log.Info("analytics service listening", "addr", lis.Addr().String())

	runDone := false
	select {
	case <-ctx.Done():
		err = nil
	case err = <-serveErr:
		err = fmt.Errorf("serve: %w", err)
	case err = <-runErr:
		runDone = true
		if err != nil {
			err = fmt.Errorf("background work: %w", err)
		}
	}
	cancel()
	svc.GRPC().GracefulStop()
	// Run returns once the consumers have finished the events in flight, so the pool is still open
	// for them; an event cut short is not acknowledged and comes back to the next consumer.
	if !runDone {
		<-runErr
	}
	log.Info("analytics service stopped")
	return err
}
