// Package svcmain is the shared body of every service's production binary: environment, logger,
// NATS JetStream, the module's process, gRPC serving, the ops endpoints and graceful shutdown. A
// service's main is one line, svcmain.Main(server.Module), so every process starts and stops the
// same way.
package svcmain

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
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

// Settings are what every service process reads besides its module's own (docs/configuration.md
// is generated from them, ModuleSettings and the modules' declarations).
var Settings = append([]config.Setting{
	{Name: "BERTH_DATABASE_URL", Kind: config.URL, Required: true, Secret: true,
		Doc: "the module's own PostgreSQL database (postgres://…); its password stays out of logs"},
	{Name: "BERTH_NATS_URL", Kind: config.Text, Default: "nats://127.0.0.1:4222", Check: natsx.CheckServers,
		Doc: "the NATS JetStream server (several URLs, comma-separated, for a cluster)"},
	events.PrefixSetting,
	{Name: "BERTH_ADMIN_TOKEN", Kind: config.Text, Secret: true, Doc: "bearer token of the provisioning calls (berthctl); unset disables them"},
	{Name: "BERTH_SERVICE_TOKEN", Kind: config.Text, Secret: true, Doc: "token Berth's processes present to each other; REST callers never carry it"},
	logx.LevelSetting,
	ops.PprofSetting,
}, grpcx.TLSSettings...)

// ModuleSettings are the addresses a module's process serves on and the addresses of the modules
// it calls.
func ModuleSettings(m module.Module) []config.Setting {
	return append([]config.Setting{
		{Name: "BERTH_GRPC_ADDR", Kind: config.Addr, Default: m.DefaultAddr, Doc: "where the process serves gRPC"},
		{Name: "BERTH_OPS_ADDR", Kind: config.Addr, Default: OpsAddr(m.DefaultAddr),
			Doc: "where it serves /healthz, /readyz and /metrics (by default the gRPC port plus 100 on the same host)"},
	}, m.PeerSettings()...)
}

// Main runs the module until SIGINT or SIGTERM and exits non-zero on failure. It parses every
// setting (Settings, ModuleSettings, the module's own) first and refuses to start, naming each bad
// or missing variable, before anything else happens.
//
// With the argument "migrate" it only brings BERTH_DATABASE_URL's schema up to date and exits: a
// deployment's migration step (the Kubernetes manifests' init container) runs it before the
// version's processes start, so a schema change is applied once, ahead of every replica.
func Main(m module.Module) {
	gcpolicy.Configure(os.Getenv) // the garbage collector's policy (pkg/gcpolicy), unless GOGC/GOMEMLIMIT say otherwise
	settings, err := config.Parse(config.OS, Settings, ModuleSettings(m), m.Settings)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: refusing to start, its settings are wrong:\n%v\n", m.Name, err)
		os.Exit(2)
	}
	out := logx.NewOutput(os.Stderr)
	log := logx.New(out, settings.String(logx.LevelSetting.Name)).With("service", m.Name)
	run := run
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		run = migrate
	}
	if err := run(log, m, settings); err != nil {
		log.Error("service stopped", "error", err.Error()) // an error flushes the output
		os.Exit(1)
	}
	_ = out.Flush()
}

// migrate applies the module's migrations to BERTH_DATABASE_URL.
func migrate(log *slog.Logger, m module.Module, settings config.Values) error {
	url := settings.String("BERTH_DATABASE_URL")
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

func run(log *slog.Logger, m module.Module, settings config.Values) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	stopTracing, err := tracing.Start(ctx, m.Name)
	if err != nil {
		return err
	}
	defer stopTracing()

	c := module.Common{
		DatabaseURL:  settings.String("BERTH_DATABASE_URL"),
		AdminToken:   settings.String("BERTH_ADMIN_TOKEN"),
		ServiceToken: settings.String("BERTH_SERVICE_TOKEN"),
		Log:          log,
		Settings:     settings,
	}
	tlsCfg, err := grpcx.TLSFromEnv(settings.Env())
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
		if !slices.Contains(m.Peers, name) {
			return nil, fmt.Errorf("%s calls the %s service, which its Module.Peers does not name", m.Name, name)
		}
		addr := settings.String(module.AddrVar(name))
		conn, err := grpcx.Dial(addr, c.ServiceToken, c.TLS)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", module.AddrVar(name), err)
		}
		conns = append(conns, conn)
		return conn, nil
	}
	nc, err := natsx.Connect(settings.String("BERTH_NATS_URL"))
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	c.Bus = events.Bus{JS: js, Prefix: settings.String(events.PrefixSetting.Name)}
	if err := c.Bus.EnsureStreams(ctx); err != nil {
		return fmt.Errorf("ensure streams: %w", err)
	}

	proc, err := m.Build(ctx, c)
	if err != nil {
		return err
	}
	defer proc.Close()

	addr := settings.String("BERTH_GRPC_ADDR")
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	opsAddr := OpsAddr(lis.Addr().String())
	if settings.Given("BERTH_OPS_ADDR") {
		opsAddr = settings.String("BERTH_OPS_ADDR")
	}
	opsLis, err := net.Listen("tcp", opsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (ops): %w", opsAddr, err)
	}
	opsSrv := &http.Server{Handler: ops.Handler(proc.Ready, settings.Bool(ops.PprofVar)), ReadHeaderTimeout: 5 * time.Second}
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
		// Stopping was already decided and err says why; the background work's own failure while it
		// stops is worth a line in the log, not a different exit.
		if rerr := <-runErr; rerr != nil {
			log.Warn("background work failed while stopping", "err", rerr)
		}
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
