// Package svcmain is the shared body of every service's production binary: environment, logger,
// NATS JetStream, the module's process, gRPC serving, the ops endpoints and graceful shutdown. A
// service's main is one line, svcmain.Main(server.Module), so every process starts and stops the
// same way.
package svcmain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/gcpolicy"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/tracing"
)

// ShutdownGrace is how long in-flight calls may take to finish after a stop signal.
const ShutdownGrace = 15 * time.Second

// Main runs the module until SIGINT or SIGTERM and exits non-zero on failure. Settings every
// module reads:
//
//	BERTH_DATABASE_URL   the module's PostgreSQL database (required)
//	BERTH_GRPC_ADDR      gRPC listen address (the module's DefaultAddr)
//	BERTH_OPS_ADDR       /healthz, /readyz, /metrics (the gRPC port + 100 on the same host)
//	BERTH_NATS_URL       NATS server (nats://127.0.0.1:4222)
//	BERTH_EVENT_PREFIX   stream and subject prefix (events.DefaultPrefix), so deployments sharing
//	                     one NATS server keep their events apart; every process of one deployment
//	                     must use the same
//	BERTH_ADMIN_TOKEN    token of provisioning calls ("" disables them)
//	BERTH_SERVICE_TOKEN  token between Berth services
//	BERTH_<NAME>_ADDR    where another module it calls is (required for each it calls)
//	BERTH_LOG_LEVEL      debug, info, warn or error (info)
//	BERTH_GRPC_TLS_CA, BERTH_GRPC_TLS_CERT, BERTH_GRPC_TLS_KEY
//	                     serve and call gRPC over TLS, service calls with mutual TLS (grpcx.TLSFromEnv)
//
// With the argument "migrate" it only brings BERTH_DATABASE_URL's schema up to date and exits: a
// deployment's migration step (the Kubernetes manifests' init container) runs it before the
// version's processes start, so a schema change is applied once, ahead of every replica.
func Main(m module.Module) {
	gcpolicy.Configure(os.Getenv) // the garbage collector's policy (pkg/gcpolicy), unless GOGC/GOMEMLIMIT say otherwise
	out := logx.NewOutput(os.Stderr)
	log := logx.New(out, config.String("BERTH_LOG_LEVEL", "info")).With("service", m.Name)
	run := run
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		run = migrate
	}
	if err := run(log, m); err != nil {
		log.Error("service stopped", "error", err.Error()) // an error flushes the output
		os.Exit(1)
	}
	_ = out.Flush()
}

// migrate applies the module's migrations to BERTH_DATABASE_URL.
func migrate(log *slog.Logger, m module.Module) error {
	url := config.String("BERTH_DATABASE_URL", "")
	if url == "" {
		return errors.New("BERTH_DATABASE_URL is required")
	}
	if m.Migrate == nil {
		return fmt.Errorf("%s has no database to migrate", m.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pool, err := pgxx.OpenMigrated(ctx, url, m.Migrate)
	if err != nil {
		return err
	}
	pool.Close()
	log.Info("database migrated")
	return nil
}

func run(log *slog.Logger, m module.Module) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	stopTracing, err := tracing.Start(ctx, m.Name)
	if err != nil {
		return err
	}
	defer stopTracing()

	c := module.Common{
		DatabaseURL:  config.String("BERTH_DATABASE_URL", ""),
		AdminToken:   config.String("BERTH_ADMIN_TOKEN", ""),
		ServiceToken: config.String("BERTH_SERVICE_TOKEN", ""),
		Log:          log,
		Env:          config.OS,
	}
	if c.DatabaseURL == "" {
		return errors.New("BERTH_DATABASE_URL is required")
	}
	tlsCfg, err := grpcx.TLSFromEnv(config.OS)
	if err != nil {
		return err
	}
	c.TLS = tlsCfg
	var conns []*grpc.ClientConn
	defer func() {
		for _, conn := range conns {
			_ = conn.Close()
		}
	}()
	c.Dial = func(name string) (grpc.ClientConnInterface, error) {
		addr := config.String(module.AddrVar(name), "")
		if addr == "" {
			return nil, fmt.Errorf("%s is required: %s calls the %s service", module.AddrVar(name), m.Name, name)
		}
		conn, err := grpcx.Dial(addr, c.ServiceToken, c.TLS)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", module.AddrVar(name), err)
		}
		conns = append(conns, conn)
		return conn, nil
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
	c.Bus = events.Bus{JS: js, Prefix: config.String("BERTH_EVENT_PREFIX", "")}
	if err := c.Bus.EnsureStreams(ctx); err != nil {
		return fmt.Errorf("ensure streams: %w", err)
	}

	proc, err := m.Build(ctx, c)
	if err != nil {
		return err
	}
	defer proc.Close()

	addr := config.String("BERTH_GRPC_ADDR", m.DefaultAddr)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	opsAddr := config.String("BERTH_OPS_ADDR", OpsAddr(lis.Addr().String()))
	opsLis, err := net.Listen("tcp", opsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (ops): %w", opsAddr, err)
	}
	opsSrv := &http.Server{Handler: ops.Handler(proc.Ready), ReadHeaderTimeout: 5 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = opsSrv.Serve(opsLis) })
	defer func() {
		_ = opsSrv.Close()
		wg.Wait()
	}()

	runErr := make(chan error, 1)
	go func() { runErr <- proc.Run(ctx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- proc.GRPC().Serve(lis) }()
	log.Info("listening", "addr", lis.Addr().String(), "ops_addr", opsLis.Addr().String())

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

// OpsAddr is the default ops address next to a gRPC address: the same host, the port plus 100
// (identity's 9101 serves ops on 9201), so processes sharing a host never collide.
func OpsAddr(grpcAddr string) string {
	host, port, err := net.SplitHostPort(grpcAddr)
	if err != nil {
		return "127.0.0.1:0"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n == 0 || n+100 > 65535 {
		return net.JoinHostPort(host, "0")
	}
	return net.JoinHostPort(host, strconv.Itoa(n+100))
}
