// Command gateway runs Berth's REST edge (and the hosted login page) as its own process in front of
// the services of the edge's routing table (edge.Modules, derived from proto/registry). Its
// settings are edge.Settings (docs/configuration.md); without the TLS settings the gRPC connections
// are plaintext (a private network).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/gcpolicy"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/tracing"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGINT/SIGTERM.
const shutdownGrace = 15 * time.Second

func main() {
	gcpolicy.Configure(os.Getenv) // the garbage collector's policy (pkg/gcpolicy), unless GOGC/GOMEMLIMIT say otherwise
	settings, err := config.Parse(config.OS, edge.Settings())
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: refusing to start, its settings are wrong:\n%v\n", err)
		os.Exit(2)
	}
	out := logx.NewOutput(os.Stderr)
	log := logx.New(out, settings.String(logx.LevelSetting.Name))
	if err := run(log, settings); err != nil {
		log.Error("gateway stopped", slog.String("error", err.Error())) // an error flushes the output
		os.Exit(1)
	}
	_ = out.Flush()
}

func run(log *slog.Logger, settings config.Values) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := tracing.Start(ctx, "gateway")
	if err != nil {
		return err
	}
	defer stopTracing()

	serviceToken := settings.String("BERTH_SERVICE_TOKEN")
	tlsCfg, err := grpcx.TLSFromEnv(settings.Env())
	if err != nil {
		return err
	}
	if tlsCfg != nil && !tlsCfg.CanServe() {
		// Under TLS the services require a certificate on service calls, which the login and
		// payment pages make.
		return fmt.Errorf("with %s the gateway needs %s and %s: its login and payment pages make service calls", grpcx.EnvTLSCA, grpcx.EnvTLSCert, grpcx.EnvTLSKey)
	}
	dial := func(name, serviceToken string) (*grpc.ClientConn, error) {
		return dialModule(settings, name, serviceToken, tlsCfg)
	}
	conns := map[string]grpc.ClientConnInterface{}
	var health []healthpb.HealthClient
	for _, name := range edge.Modules() {
		conn, err := dial(name, "")
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		conns[name] = conn
		health = append(health, healthpb.NewHealthClient(conn))
	}
	loginConn, err := dial(edge.LoginModule, serviceToken)
	if err != nil {
		return err
	}
	defer func() { _ = loginConn.Close() }()
	paymentConn, err := dial(edge.PaymentModule, serviceToken)
	if err != nil {
		return err
	}
	defer func() { _ = paymentConn.Close() }()

	proxies, err := login.ParseProxies(settings.String(edge.TrustedProxiesSetting.Name))
	if err != nil {
		return fmt.Errorf("%s: %w", edge.TrustedProxiesSetting.Name, err)
	}
	handler, err := edge.New(ctx, conns, log, edge.WithLogin(loginConn), edge.WithPayment(paymentConn), edge.WithTrustedProxies(proxies))
	if err != nil {
		return err
	}
	addr := settings.String(edge.HTTPAddrSetting.Name)
	srv := edge.NewServer(handler)
	srv.Addr = addr
	opsAddr := settings.String("BERTH_OPS_ADDR")
	opsSrv := &http.Server{Addr: opsAddr, Handler: ops.Handler(backendsServing(health), settings.Bool(ops.PprofVar)), ReadHeaderTimeout: 5 * time.Second}

	served := make(chan error, 2)
	go func() { served <- srv.ListenAndServe() }()
	go func() { served <- opsSrv.ListenAndServe() }()
	log.Info("gateway listening", slog.String("addr", addr), slog.String("ops_addr", opsAddr))

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("gateway shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = opsSrv.Close()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// backendsServing is the gateway's readiness: every backend answers its gRPC health check with
// SERVING (which each service keeps in step with its own readiness).
func backendsServing(clients []healthpb.HealthClient) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for i, c := range clients {
			res, err := c.Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil {
				return fmt.Errorf("%s: %w", edge.Modules()[i], err)
			}
			if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return fmt.Errorf("%s: %s", edge.Modules()[i], res.GetStatus())
			}
		}
		return nil
	}
}

// dialModule opens a lazy client connection to module name's gRPC address (BERTH_<NAME>_ADDR); it
// does not wait for the service, so the edge can start before its backends.
func dialModule(settings config.Values, name, serviceToken string, tlsCfg *grpcx.TLS) (*grpc.ClientConn, error) {
	env := module.AddrVar(name)
	target := settings.String(env)
	cc, err := grpcx.Dial(target, serviceToken, tlsCfg)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", env, target, err)
	}
	return cc, nil
}
