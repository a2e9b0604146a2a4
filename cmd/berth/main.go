// Command berth runs the whole of Berth in one process on embedded defaults (`make run`): every
// service, the REST edge, embedded NATS JetStream and memory stores (Postgres when
// BERTH_DATABASE_URL is set), with a seeded demo app.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/gateway/apidocs"
	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/ops"
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
	demo, resumed, err := seedDemo(ctx, s, cfg.AdminToken, settings.String("BERTH_DEMO_REDIRECT_URI"), filepath.Join(dir, seed.FileName))
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
	origin := ""
	if resumed {
		origin = " (from an earlier run)"
	}
	fmt.Printf("\nBerth is running at %s (gRPC: %s; readiness %s%s, metrics %s%s)\n", s.BaseURL, grpcAddrs(s), s.BaseURL, ops.ReadyPath, s.BaseURL, ops.MetricsPath)
	fmt.Printf("API reference: %s%s (the OpenAPI document: %s%s)\n", s.BaseURL, apidocs.Path, s.BaseURL, edge.OpenAPIPath)
	fmt.Printf("Demo app %s%s; facts written to %s. Try:\n\n", demo.AppID, origin, path)
	for _, c := range demo.Curls() {
		fmt.Println("  " + c)
	}
	fmt.Printf("\nSign up as an end user: open %s\nthen exchange the code and call the API as that user:\n\n", demo.LoginURL())
	for _, c := range demo.TokenCurls() {
		fmt.Println("  " + c)
	}
	fmt.Printf("\nPay: start a checkout (the first app is on pspx, the second on pspy), then open the answer's\nnextAction.url with &state=%s appended; pay with card 4242 4242 4242 4242 on pspx or choose\n\"paid\" on pspy, and read the tenant again:\n\n", seed.DemoState)
	for _, c := range demo.CheckoutCurls() {
		fmt.Println("  " + c)
	}
	fmt.Printf("\nThe provider sandboxes: %s and %s; move their clock with\n  curl -s -X POST -d '{\"seconds\":2678400}' %s/_sandbox/clock/advance\n", demo.Sandbox.Pspx, demo.Sandbox.Pspy, s.BaseURL)
	fmt.Printf("\nThe example app (a static page on the published browser SDK; npm ci in %s first): %s%s\n", cfg.ExampleDir, s.BaseURL, allinone.ExamplePath)
	fmt.Printf("\nEmails the run sends (referral invites) land in %s%s\n", s.BaseURL, allinone.DevMailboxPath)
	fmt.Printf("\nProvision more with berthctl, which finds this run through %s (admin token %s):\n  go run ./cmd/berthctl help\nCtrl-C stops.\n", path, cfg.AdminToken)
	err = s.Wait(ctx)
	log.Info("shutting down")
	return err
}

// seedDemo brings back the demo an earlier run on the same databases described in path
// (seed.Resume), or provisions a new one (resumed false); redirectURI "" is the run's own callback
// page.
func seedDemo(ctx context.Context, s *allinone.Stack, adminToken, redirectURI, path string) (_ seed.Demo, resumed bool, _ error) {
	if redirectURI == "" {
		redirectURI = s.BaseURL + allinone.DevCallbackPath
	}
	dial := func(addr string) (*grpc.ClientConn, error) {
		return grpc.NewClient(addr, append(grpcx.ClientOptions("", s.TLS), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(adminToken)))...)
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
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	admin := seed.Admin{Identity: identityv1.NewIdentityAdminServiceClient(ic), Tenant: tenantv1.NewTenantAdminServiceClient(tc),
		Billing: billingv1.NewBillingAdminServiceClient(bc)}
	opts := seed.Options{BaseURL: s.BaseURL, RedirectURI: redirectURI, ExampleURI: s.BaseURL + allinone.ExamplePath, Sandbox: seed.Sandbox{Pspx: s.Sandboxes.PspxURL, Pspy: s.Sandboxes.PspyURL}}
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
