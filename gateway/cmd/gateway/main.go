// Command gateway runs Berth's REST edge (and the hosted login page) as its own process in front of
// the services of the edge's routing table (edge.Modules, derived from proto/registry). Its
// settings are edge.Settings (docs/configuration.md); without the TLS settings the gRPC connections
// are plaintext (a private network).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/ops"
)

func main() {
	host.Main("gateway", [][]config.Setting{edge.Settings()}, run)
}

// run serves the edge in front of the services at their addresses (BERTH_<NAME>_ADDR), with the
// ops endpoints on a listener of their own.
func run(ctx context.Context, log *slog.Logger, settings config.Values) error {
	tlsCfg, err := grpcx.TLSFromEnv(settings.Env())
	if err != nil {
		return err
	}
	if tlsCfg != nil && !tlsCfg.CanServe() {
		// Under TLS the services require a certificate on service calls, which the login and
		// payment pages make.
		return fmt.Errorf("with %s the gateway needs %s and %s: its login and payment pages make service calls", grpcx.EnvTLSCA, grpcx.EnvTLSCert, grpcx.EnvTLSKey)
	}
	proxies, err := login.ParseProxies(settings.String(edge.TrustedProxiesSetting.Name))
	if err != nil {
		return fmt.Errorf("%s: %w", edge.TrustedProxiesSetting.Name, err)
	}
	remotes := host.NewRemotes("gateway", edge.Backends(), settings, settings.String("BERTH_SERVICE_TOKEN"), tlsCfg)
	defer remotes.Close()
	lis, err := net.Listen("tcp", settings.String(edge.HTTPAddrSetting.Name))
	if err != nil {
		return err
	}
	h, err := host.Start(ctx, nil, host.Options{
		Log: log, TLS: tlsCfg, Remote: remotes.Dial, Ready: backendsServing(remotes),
		OpsAddr: settings.String("BERTH_OPS_ADDR"), Profiler: settings.Bool(ops.PprofVar),
		// The edge's listener answers the requests Go's server refuses before any handler in their
		// family.
		HTTPListener: edge.Listener(lis, log),
		HTTP: func(ctx context.Context, dial host.Dialer, _ func(*http.ServeMux)) (http.Handler, error) {
			return edge.FromDialer(ctx, dial, log, edge.WithTrustedProxies(proxies))
		},
	})
	if err != nil {
		_ = lis.Close()
		return err
	}
	defer h.Close()
	err = h.Wait(ctx)
	log.Info("gateway shutting down")
	return err
}

// backendsServing is the gateway's readiness: every backend answers its gRPC health check with
// SERVING (which each service keeps in step with its own readiness).
func backendsServing(remotes *host.Remotes) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for _, name := range edge.Modules() {
			conn, err := remotes.Dial(name, false)
			if err != nil {
				return err
			}
			res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return fmt.Errorf("%s: %s", name, res.GetStatus())
			}
		}
		return nil
	}
}
