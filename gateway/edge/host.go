package edge

import (
	"context"
	"log/slog"
	"net/http"
	"slices"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
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

// Settings are everything the gateway process reads: its addresses, the service token its pages
// need, the proxies it trusts, where each backend module is, the log level, the profiler and gRPC
// TLS.
func Settings() []config.Setting {
	s := []config.Setting{
		HTTPAddrSetting,
		{Name: "BERTH_OPS_ADDR", Kind: config.Addr, Default: "127.0.0.1:8180", Doc: "where it serves /healthz, /readyz and /metrics"},
		{Name: "BERTH_SERVICE_TOKEN", Kind: config.Text, Required: true, Secret: true,
			Doc: "token of the login and payment pages' calls, which only Berth services may make; forwarded REST calls never carry it"},
		TrustedProxiesSetting,
	}
	for _, m := range Backends() {
		s = append(s, config.Setting{Name: module.AddrVar(m), Kind: config.Text, Required: true, Check: grpcx.CheckTarget,
			Doc: "where the " + m + " service's gRPC servers are: host:port (resolved through DNS) or its replicas' host:port separated by commas"})
	}
	return append(append(s, logx.LevelSetting, ops.PprofSetting), grpcx.TLSSettings...)
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

// FromDialer builds the edge over the connections dial gives: one without the service token to
// every module of Modules, and service connections for the login and payment pages. The gateway
// and the all-in-one both serve it through pkg/host.
func FromDialer(ctx context.Context, dial host.Dialer, log *slog.Logger, opts ...Option) (http.Handler, error) {
	conns := map[string]grpc.ClientConnInterface{}
	for _, name := range Modules() {
		conn, err := dial(name, false)
		if err != nil {
			return nil, err
		}
		conns[name] = conn
	}
	login, err := dial(LoginModule, true)
	if err != nil {
		return nil, err
	}
	payment, err := dial(PaymentModule, true)
	if err != nil {
		return nil, err
	}
	return New(ctx, conns, log, append(opts, WithLogin(login), WithPayment(payment))...)
}
