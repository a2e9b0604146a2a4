// Command gateway runs Berth's REST edge (and the hosted login and payment pages) as its own
// process: a host (pkg/host) running the edge module alone in front of the services of the edge's
// routing table (edge.Modules, derived from proto/registry), reached at their addresses. Its
// settings are edge.Settings (docs/configuration.md); without the TLS settings the gRPC
// connections are plaintext (a private network).
//
// Its readiness is its own: a service that is down makes that service's routes answer 500 in their
// family, while the edge stays in its load balancer and serves every other service's routes.
package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/berthhq/berth/gateway/edge"
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
	serviceToken := settings.String("BERTH_SERVICE_TOKEN")
	remotes := host.NewRemotes("gateway", edge.Module.Peers, settings, serviceToken, tlsCfg)
	defer remotes.Close()
	lis, err := host.Listen(edge.Module.Name, settings.String(edge.HTTPAddrSetting.Name), edge.HTTPAddrSetting.Name)
	if err != nil {
		return err
	}
	return host.Run(ctx, []module.Module{edge.Module}, host.Options{
		Log: log, TLS: tlsCfg, Remote: remotes.Dial, ServiceToken: serviceToken, HTTPListener: lis,
		Settings: map[string]config.Values{edge.Module.Name: settings},
		OpsAddr:  settings.String(ops.AddrVar), Profiler: settings.Bool(ops.PprofVar),
	})
}
