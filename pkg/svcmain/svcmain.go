// Package svcmain is the shared body of every service's production binary: environment, logger,
// NATS JetStream, the service's composition root, gRPC serving and graceful shutdown. A service's
// main only says how to build itself, so every process starts and stops the same way.
package svcmain

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
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/natsx"
)

// ShutdownGrace is how long in-flight calls may take to finish after a stop signal.
const ShutdownGrace = 15 * time.Second

// Process is a built service: its gRPC server, its background work (outbox relay, consumers) and
// what it holds open.
type Process interface {
	GRPC() *grpc.Server
	Run(ctx context.Context) error
	Close()
}

// Env is what a service is built from. Common settings are read once here:
//
//	BERTH_DATABASE_URL   PostgreSQL URL (required)
//	BERTH_GRPC_ADDR      listen address (the service's default port)
//	BERTH_NATS_URL       NATS server (nats://127.0.0.1:4222)
//	BERTH_ADMIN_TOKEN    token of provisioning calls ("" disables them)
//	BERTH_SERVICE_TOKEN  token between Berth services
//	BERTH_LOG_LEVEL      debug, info, warn or error (info)
type Env struct {
	Log          *slog.Logger
	Bus          events.Bus
	DatabaseURL  string
	AdminToken   string
	ServiceToken string

	conns []*grpc.ClientConn
}

// Dial connects to another Berth service whose address is in the variable name (def when unset);
// the connection sends the service token and is closed when the process ends.
func (e *Env) Dial(name, def string) (*grpc.ClientConn, error) {
	conn, err := grpcx.Dial(config.String(name, def), e.ServiceToken)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e.conns = append(e.conns, conn)
	return conn, nil
}

// Main runs the named service until SIGINT or SIGTERM and exits non-zero on failure.
func Main(name, defaultAddr string, build func(ctx context.Context, env *Env) (Process, error)) {
	log := logx.New(os.Stderr, config.String("BERTH_LOG_LEVEL", "info")).With("service", name)
	if err := run(log, defaultAddr, build); err != nil {
		log.Error("service stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(log *slog.Logger, defaultAddr string, build func(context.Context, *Env) (Process, error)) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	env := &Env{
		Log:          log,
		DatabaseURL:  config.String("BERTH_DATABASE_URL", ""),
		AdminToken:   config.String("BERTH_ADMIN_TOKEN", ""),
		ServiceToken: config.String("BERTH_SERVICE_TOKEN", ""),
	}
	if env.DatabaseURL == "" {
		return errors.New("BERTH_DATABASE_URL is required")
	}
	defer func() {
		for _, c := range env.conns {
			_ = c.Close()
		}
	}()
	nc, err := natsx.Connect(config.String("BERTH_NATS_URL", "nats://127.0.0.1:4222"))
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	env.Bus = events.Bus{JS: js}
	if err := env.Bus.EnsureStreams(ctx); err != nil {
		return fmt.Errorf("ensure streams: %w", err)
	}

	proc, err := build(ctx, env)
	if err != nil {
		return err
	}
	defer proc.Close()

	addr := config.String("BERTH_GRPC_ADDR", defaultAddr)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- proc.Run(ctx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- proc.GRPC().Serve(lis) }()
	log.Info("listening", "addr", lis.Addr().String())

	runDone := false
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		err = fmt.Errorf("serve: %w", err)
	case err = <-runErr:
		runDone = true
		if err != nil {
			err = fmt.Errorf("background work: %w", err)
		}
	}
	cancel()
	// GracefulStop lets in-flight calls finish. Run returns once relays and consumers have finished
	// what they hold, so the database is still open for them; an event cut short is not
	// acknowledged and comes back to another replica, and outbox rows a late call commits wait for
	// the next relay.
	drained := make(chan struct{})
	go func() { proc.GRPC().GracefulStop(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(ShutdownGrace):
		proc.GRPC().Stop()
	}
	if !runDone {
		<-runErr
	}
	log.Info("stopped")
	return err
}
