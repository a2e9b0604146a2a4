// Command sandbox serves the provider sandboxes alone, for people integrating against Berth and for
// the compose deployment. It is a host (pkg/host) like every Berth process, running the sandbox
// module: its settings are mount.Settings (docs/configuration.md), parsed before anything starts,
// and it serves /healthz, /readyz and /metrics beside the sandboxes.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/services/sandbox/mount"
)

func main() {
	host.Main("sandbox", [][]config.Setting{mount.Settings}, run)
}

func run(ctx context.Context, log *slog.Logger, settings config.Values) error {
	scale := settings.Float(mount.TimeScaleSetting.Name)
	ln, err := net.Listen("tcp", settings.String("BERTH_SANDBOX_ADDR"))
	if err != nil {
		return fmt.Errorf("BERTH_SANDBOX_ADDR: %w", err)
	}
	public := settings.String("BERTH_SANDBOX_PUBLIC_URL")
	if public == "" {
		public = "http://" + ln.Addr().String()
	}
	sb := mount.NewWithOptions(public, log, mount.Options{TimeScale: scale})
	log.Info("sandboxes", "pspx", sb.PspxURL, "pspy", sb.PspyURL, "idp", sb.IdpURL+"/idpA (…/idpD, or any name)", "clock", "POST "+mount.ClockPath,
		"faults", mount.FaultsPath, "deliveries", mount.DeliveriesPath, "timeScale", scale)
	return host.Run(ctx, []module.Module{sb.Module()}, host.Options{Log: log, HTTPListener: ln})
}
