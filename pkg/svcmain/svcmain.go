// Package svcmain is the body of every context's production binary: a host (pkg/host) running the
// one module, with the modules it calls at their addresses and the ops endpoints on a listener of
// their own. A service's main is one line, svcmain.Main(server.Module), so every process starts and
// stops the same way.
package svcmain

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/pgxx"
)

// DatabaseURLSetting is the module's own database.
var DatabaseURLSetting = config.Setting{Name: "BERTH_DATABASE_URL", Kind: config.URL, Required: true, Secret: true,
	Doc: "the module's own PostgreSQL database (postgres://…); its password stays out of logs"}

// Settings are what every service process reads besides its module's own (docs/configuration.md
// is generated from them, ModuleSettings and the modules' declarations).
var Settings = append([]config.Setting{
	DatabaseURLSetting,
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
		{Name: ops.AddrVar, Kind: config.Addr, Default: OpsAddr(m.DefaultAddr),
			Doc: "where it serves /healthz, /readyz and /metrics (by default the gRPC port plus 100 on the same host)"},
	}, m.PeerSettings()...)
}

// Main runs the module until SIGINT or SIGTERM and exits non-zero on failure. It parses every
// setting (Settings, ModuleSettings, the module's own) first and refuses to start, naming each bad
// or missing variable, before anything else happens (host.Main).
//
// With the argument "migrate" it only brings BERTH_DATABASE_URL's schema up to date and exits: a
// deployment's migration step (the Kubernetes manifests' init container) runs it before the
// version's processes start, so a schema change is applied once, ahead of every replica.
func Main(m module.Module) {
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		host.Main(m.Name, [][]config.Setting{MigrateSettings}, func(_ context.Context, log *slog.Logger, settings config.Values) error {
			return migrate(log.With("service", m.Name), m, settings)
		})
		return
	}
	host.Main(m.Name, [][]config.Setting{Settings, ModuleSettings(m), m.Settings}, func(ctx context.Context, log *slog.Logger, settings config.Values) error {
		return run(ctx, log.With("service", m.Name), m, settings)
	})
}

// MigrateSettings are all the migration step reads: it touches nothing but the database.
var MigrateSettings = []config.Setting{DatabaseURLSetting, logx.LevelSetting}

// migrate applies the module's migrations to BERTH_DATABASE_URL.
func migrate(log *slog.Logger, m module.Module, settings config.Values) error {
	if m.Migrate == nil {
		return fmt.Errorf("%s has no database to migrate", m.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pool, err := pgxx.OpenMigrated(ctx, settings.String("BERTH_DATABASE_URL"), m.Migrate)
	if err != nil {
		return err
	}
	pool.Close()
	log.Info("database migrated")
	return nil
}

// run serves the module as its own process: the modules it calls are reached at their addresses
// (BERTH_<NAME>_ADDR), the ops endpoints on a listener of their own.
func run(ctx context.Context, log *slog.Logger, m module.Module, settings config.Values) error {
	tlsCfg, err := grpcx.TLSFromEnv(settings.Env())
	if err != nil {
		return err
	}
	bus, closeBus, err := host.ConnectBus(ctx, settings.String("BERTH_NATS_URL"), settings.String(events.PrefixSetting.Name))
	if err != nil {
		return err
	}
	defer closeBus()
	serviceToken := settings.String("BERTH_SERVICE_TOKEN")
	remotes := host.NewRemotes(m.Name, m.Peers, settings, serviceToken, tlsCfg)
	defer remotes.Close()
	grpcAddr := settings.String("BERTH_GRPC_ADDR")
	opsAddr := OpsAddr(grpcAddr)
	if settings.Given(ops.AddrVar) {
		opsAddr = settings.String(ops.AddrVar)
	}
	return host.Run(ctx, []module.Module{m}, host.Options{
		Log: log, Bus: bus, TLS: tlsCfg, Remote: remotes.Dial, OpsAddr: opsAddr, Profiler: settings.Bool(ops.PprofVar),
		Settings:     map[string]config.Values{m.Name: settings},
		DatabaseURLs: map[string]string{m.Name: settings.String("BERTH_DATABASE_URL")},
		GRPCAddrs:    map[string]string{m.Name: grpcAddr},
		GRPCAddrVars: map[string]string{m.Name: "BERTH_GRPC_ADDR"},
		AdminToken:   settings.String("BERTH_ADMIN_TOKEN"), ServiceToken: serviceToken,
	})
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
