// Command gateway runs Berth's REST edge (and the hosted login page) as its own process in front of
// the services named in the edge's backend table.
//
// Environment:
//
//	BERTH_HTTP_ADDR        listen address (default 127.0.0.1:8080)
//	BERTH_OPS_ADDR         /healthz, /readyz (every backend's gRPC health SERVING), /metrics
//	                       (default 127.0.0.1:8180)
//	BERTH_<NAME>_ADDR      host:port of each backend module's gRPC server (required), e.g.
//	                       BERTH_IDENTITY_ADDR, BERTH_TENANT_ADDR, BERTH_ANALYTICS_ADDR
//	BERTH_SERVICE_TOKEN    service-to-service token (required): the login page calls identity's
//	                       LoginService, which only Berth services may call; the forwarded REST
//	                       calls never carry it
//	BERTH_TRUSTED_PROXIES  reverse proxies whose X-Forwarded-For the login page believes
//	BERTH_GRPC_TLS_CA      call the backends over TLS, verifying them against this CA; with
//	BERTH_GRPC_TLS_CERT    BERTH_GRPC_TLS_CERT and _KEY the login and payment pages' service calls
//	BERTH_GRPC_TLS_KEY     present this certificate (mutual TLS); see grpcx.TLSFromEnv
//
// Without the TLS settings the gRPC connections are plaintext (a private network).
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

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/heap"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/tracing"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGINT/SIGTERM.
const shutdownGrace = 15 * time.Second

func main() {
	heap.Configure(os.Getenv) // the garbage collector's policy (pkg/heap), unless GOGC/GOMEMLIMIT say otherwise
	out := logx.NewOutput(os.Stderr)
	log := logx.New(out, config.String("BERTH_LOG_LEVEL", "info"))
	if err := run(log); err != nil {
		log.Error("gateway stopped", slog.String("error", err.Error())) // an error flushes the output
		os.Exit(1)
	}
	_ = out.Flush()
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := tracing.Start(ctx, "gateway")
	if err != nil {
		return err
	}
	defer stopTracing()

	serviceToken := config.String("BERTH_SERVICE_TOKEN", "")
	if serviceToken == "" {
		return errors.New("BERTH_SERVICE_TOKEN is required (the login and payment pages call service-only services)")
	}
	tlsCfg, err := grpcx.TLSFromEnv(config.OS)
	if err != nil {
		return err
	}
	if tlsCfg != nil && !tlsCfg.CanServe() {
		// Under TLS the services require a certificate on service calls, which the login and
		// payment pages make.
		return fmt.Errorf("with %s the gateway needs %s and %s: its login and payment pages make service calls", grpcx.EnvTLSCA, grpcx.EnvTLSCert, grpcx.EnvTLSKey)
	}
	dial := func(name, serviceToken string) (*grpc.ClientConn, error) {
		return dialModule(name, serviceToken, tlsCfg)
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

	proxies, err := login.ParseProxies(config.String("BERTH_TRUSTED_PROXIES", ""))
	if err != nil {
		return fmt.Errorf("BERTH_TRUSTED_PROXIES: %w", err)
	}
	handler, err := edge.New(ctx, conns, log, edge.WithLogin(loginConn), edge.WithPayment(paymentConn), edge.WithTrustedProxies(proxies))
	if err != nil {
		return err
	}
	addr := config.String("BERTH_HTTP_ADDR", "127.0.0.1:8080")
	srv := &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	opsAddr := config.String("BERTH_OPS_ADDR", "127.0.0.1:8180")
	opsSrv := &http.Server{Addr: opsAddr, Handler: ops.Handler(backendsServing(health)), ReadHeaderTimeout: 5 * time.Second}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	served := make(chan error, 2)
	// The edge's listener answers requests Go's server refuses before any handler in their family.
	go func() { served <- srv.Serve(edge.Listener(ln, log)) }()
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
func dialModule(name, serviceToken string, tlsCfg *grpcx.TLS) (*grpc.ClientConn, error) {
	env := module.AddrVar(name)
	target := config.String(env, "")
	if target == "" {
		return nil, fmt.Errorf("%s is required (host:port of the %s service's gRPC server)", env, name)
	}
	cc, err := grpcx.Dial(target, serviceToken, tlsCfg)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", env, target, err)
	}
	return cc, nil
}
