// Command berth runs the whole of Berth in one process on embedded defaults (`make run`): every
// service, the REST edge, embedded NATS JetStream and memory stores (Postgres when
// BERTH_DATABASE_URL is set), with a seeded demo app.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/logx"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"google.golang.org/grpc"
)

func main() {
	host.Main("berth", [][]config.Setting{allinone.Settings()}, run)
}

func run(ctx context.Context, log *slog.Logger, settings config.Values) error {
	cfg, err := allinone.FromSettings(ctx, settings, log)
	if err != nil {
		return err
	}
	s, err := allinone.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()

	dir := settings.String("BERTH_DEMO_DIR")
	demo, resumed, err := seedDemo(ctx, s, cfg.AdminToken, cfg.ServiceToken, settings.String("BERTH_DEMO_REDIRECT_URI"), filepath.Join(dir, seed.FileName))
	if err != nil {
		return err
	}
	s.Example.Use(demo.AppID)
	addrs := map[string]string{}
	for _, m := range allinone.Modules {
		addrs[m.Name] = s.Addr(m.Name)
	}
	path, err := seed.WriteFile(dir, seed.File{Demo: demo, AdminToken: cfg.AdminToken, GRPC: addrs})
	if err != nil {
		return err
	}
	s.ShowDemo(demo)
	_ = logx.Flush(log) // the start-up's lines first: the banner comes last
	printBanner(os.Stdout, s, demo, resumed, path, cfg.AdminToken)
	err = s.Wait(ctx)
	log.Info("shutting down")
	return err
}

// seedDemo brings back the demo an earlier run on the same databases described in path
// (seed.Resume), or provisions a new one (resumed false); redirectURI "" gives the apps the run's
// own development pages. Its calls are marked as start-up provisioning, so their access lines are
// debug lines.
func seedDemo(ctx context.Context, s *allinone.Stack, adminToken, serviceToken, redirectURI, path string) (_ seed.Demo, resumed bool, _ error) {
	dial := func(addr string) (*grpc.ClientConn, error) {
		return grpc.NewClient(addr, append(grpcx.ClientOptions("", s.TLS), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(adminToken), grpcx.SetupInterceptor()))...)
	}
	ic, err := dial(s.Addr("identity"))
	if err != nil {
		return seed.Demo{}, false, err
	}
	defer func() { _ = ic.Close() }()
	tc, err := dial(s.Addr("tenant"))
	if err != nil {
		return seed.Demo{}, false, err
	}
	defer func() { _ = tc.Close() }()
	bc, err := dial(s.Addr("billing"))
	if err != nil {
		return seed.Demo{}, false, err
	}
	defer func() { _ = bc.Close() }()
	// The console's own calls carry the service token (and, over TLS, the client certificate that
	// service calls need).
	mc, err := grpc.NewClient(s.Addr("identity"), append(grpcx.ClientOptions(serviceToken, s.TLS), grpc.WithChainUnaryInterceptor(grpcx.SetupInterceptor()))...)
	if err != nil {
		return seed.Demo{}, false, err
	}
	defer func() { _ = mc.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	admin := seed.Admin{Identity: identityv1.NewIdentityAdminServiceClient(ic), Tenant: tenantv1.NewTenantAdminServiceClient(tc),
		Billing: billingv1.NewBillingAdminServiceClient(bc), Members: identityv1.NewMemberServiceClient(mc)}
	opts := s.DemoOptions(redirectURI)
	// Memory stores start empty, so only a run on databases can hold an earlier demo.
	if s.DatabaseURLs != nil {
		if prev, err := seed.ReadFile(path); err == nil {
			demo, err := seed.Resume(ctx, admin, prev.Demo, opts)
			if !errors.Is(err, seed.ErrNotHere) {
				return demo, err == nil, err
			}
		}
	}
	demo, err := seed.Run(ctx, admin, opts)
	return demo, false, err
}

// grpcAddrs lists where each module serves gRPC, in module order.
func grpcAddrs(s *allinone.Stack) string {
	parts := make([]string, len(allinone.Modules))
	for i, m := range allinone.Modules {
		parts[i] = m.Name + " " + s.Addr(m.Name)
	}
	return strings.Join(parts, ", ")
}
