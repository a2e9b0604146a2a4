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
	"sync"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/module"
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
	backends := newBackends(settings, tlsCfg)
	defer backends.close()
	lis, err := net.Listen("tcp", settings.String(edge.HTTPAddrSetting.Name))
	if err != nil {
		return err
	}
	h, err := host.Start(ctx, nil, host.Options{
		Log: log, TLS: tlsCfg, Remote: backends.dial, Ready: backends.serving,
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

// backends are the gateway's lazy connections to the services, one per module and credential:
// they do not wait for the services, so the edge can start before its backends.
type backends struct {
	settings config.Values
	tls      *grpcx.TLS
	mu       sync.Mutex                  // readiness probes dial while the edge is built
	conns    map[string]*grpc.ClientConn // by module name, and name+"/service" with the service token
}

func newBackends(settings config.Values, tlsCfg *grpcx.TLS) *backends {
	return &backends{settings: settings, tls: tlsCfg, conns: map[string]*grpc.ClientConn{}}
}

func (b *backends) dial(name string, service bool) (grpc.ClientConnInterface, error) {
	key, token := name, ""
	if service {
		key, token = name+"/service", b.settings.String("BERTH_SERVICE_TOKEN")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if conn, ok := b.conns[key]; ok {
		return conn, nil
	}
	env := module.AddrVar(name)
	target := b.settings.String(env)
	conn, err := grpcx.Dial(target, token, b.tls)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", env, target, err)
	}
	b.conns[key] = conn
	return conn, nil
}

// serving is the gateway's readiness: every backend answers its gRPC health check with SERVING
// (which each service keeps in step with its own readiness).
func (b *backends) serving(ctx context.Context) error {
	for _, name := range edge.Modules() {
		conn, err := b.dial(name, false)
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

func (b *backends) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, conn := range b.conns {
		_ = conn.Close()
	}
}
