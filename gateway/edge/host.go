package edge

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
)

// TrustedProxiesSetting names the reverse proxies whose X-Forwarded-For the login page believes.
var TrustedProxiesSetting = config.Setting{Name: "BERTH_TRUSTED_PROXIES", Kind: config.Text,
	Check: func(s string) error { _, err := login.ParseProxies(s); return err },
	Doc:   "reverse proxies (addresses and CIDRs, comma-separated) whose X-Forwarded-For the login page believes for the end user's address"}

// HTTPAddrSetting is where the edge listens.
var HTTPAddrSetting = config.Setting{Name: "BERTH_HTTP_ADDR", Kind: config.Addr, Default: "127.0.0.1:8080", Doc: "where the REST edge listens"}

// Module is the REST edge as a module of a host (pkg/host): its routes, the hosted login and
// payment pages and the API reference, at "/" on the host's HTTP listener, in front of the modules
// of Modules (reached with its callers' credentials only) and those behind its pages (with the
// service token). The gateway process runs it alone; the all-in-one beside every other module.
var Module = module.Module{
	Name:     "edge",
	Settings: []config.Setting{TrustedProxiesSetting, console.KeySetting},
	Peers:    Backends(),
	Web:      site,
}

// Settings are everything the gateway process reads: its addresses, the service token its pages
// need, the edge module's own settings, where each backend module is, the log level, the profiler
// and gRPC TLS.
func Settings() []config.Setting {
	s := []config.Setting{
		HTTPAddrSetting,
		{Name: ops.AddrVar, Kind: config.Addr, Default: "127.0.0.1:8180", Doc: "where it serves /healthz, /readyz and /metrics"},
		{Name: "BERTH_SERVICE_TOKEN", Kind: config.Text, Required: true, Secret: true,
			Doc: "token of the login and payment pages' calls, which only Berth services may make; forwarded REST calls never carry it"},
	}
	s = append(append(s, Module.Settings...), Module.PeerSettings()...)
	return append(append(s, logx.LevelSetting, logx.FormatSetting, ops.PprofSetting), grpcx.TLSSettings...)
}

// Backends are the modules the edge calls: those it forwards to (Modules) and those behind its
// login and payment pages.
func Backends() []string {
	backends := Modules()
	for _, m := range []string{LoginModule, PaymentModule} {
		if !slices.Contains(backends, m) {
			backends = append(backends, m)
		}
	}
	return backends
}

// site builds the edge over c's connections and claims every path of the host's HTTP listener that
// no other site claims; it also answers, in its envelope families, the paths a ServeMux would
// redirect and the requests Go's server refuses.
func site(ctx context.Context, c module.Common) (*module.Site, error) {
	proxies, err := login.ParseProxies(c.Settings.String(TrustedProxiesSetting.Name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TrustedProxiesSetting.Name, err)
	}
	conns := map[string]grpc.ClientConnInterface{}
	for _, name := range Modules() {
		if conns[name], err = c.Forward(name); err != nil {
			return nil, err
		}
	}
	loginConn, err := c.Dial(LoginModule)
	if err != nil {
		return nil, err
	}
	payment, err := c.Dial(PaymentModule)
	if err != nil {
		return nil, err
	}
	log := c.Logger()
	opts := []Option{WithTrustedProxies(proxies), WithLogin(loginConn), WithPayment(payment)}
	if key := c.Settings.Bytes(console.KeySetting.Name); key != nil {
		opts = append(opts, WithConsole(key))
	}
	handler, err := New(ctx, conns, log, opts...)
	if err != nil {
		return nil, err
	}
	return &module.Site{
		Register: func(mux *http.ServeMux) { mux.Handle("/", handler) },
		Front:    func(site http.Handler) http.Handler { return Front(site, handler) },
		Listener: func(l net.Listener) net.Listener { return Listener(l, log) },
	}, nil
}
