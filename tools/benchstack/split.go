package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/testkit/procs"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// split is the production shape: every module's binary and the gateway, each a process of its
// own, on databases of their own on the run's PostgreSQL server and a NATS server on loopback (an
// embedded one, started here), as the Kubernetes manifests and the cluster test run them. One
// replica of each: a request's cost on its way through the processes is what is measured, not
// scaling.
type split struct {
	procs   []*procs.Process  // every module's, in Modules order, then the gateway's
	ready   map[string]string // process name -> its /readyz
	baseURL string            // the gateway
	env     map[string]string // what every process is given: tokens, addresses, secrets
	dbNames []string          // the databases it created, for the caller to count and drop
	nats    *natsx.Embedded
}

// startSplit builds and starts the split on databases named <base>_<module> on the server of
// baseURL (withDatabase(server, base)), its billing calling the provider sandboxes at pspx and
// pspy, and waits until every process is ready. The caller stops it (stop) and drops dbNames, also
// when an error is returned. With profile, every process serves the Go profiler on its ops address,
// which it prints to out.
func startSplit(ctx context.Context, root, dir, baseURL, base, pspx, pspy string, profile bool, out io.Writer) (s *split, err error) {
	s = &split{ready: map[string]string{}}
	bins := map[string]string{}
	for _, m := range allinone.Modules {
		if bins[m.Name], err = procs.Build(root, dir, "./services/"+m.Name+"/cmd/"+m.Name); err != nil {
			return s, err
		}
	}
	gatewayBin, err := procs.Build(root, dir, "./gateway/cmd/gateway")
	if err != nil {
		return s, err
	}
	if s.nats, err = natsx.StartEmbedded(filepath.Join(dir, base+"-nats"), "127.0.0.1:0"); err != nil {
		return s, fmt.Errorf("nats: %w", err)
	}
	n := len(allinone.Modules)
	addrs, err := procs.FreeAddrs(2*n + 2)
	if err != nil {
		return s, err
	}
	gatewayAddr, gatewayOps := addrs[2*n], addrs[2*n+1]
	s.baseURL = "http://" + gatewayAddr
	s.env = map[string]string{
		"BERTH_NATS_URL": s.nats.Server.ClientURL(), "BERTH_ADMIN_TOKEN": randomHex(16), "BERTH_SERVICE_TOKEN": randomHex(16),
		"BERTH_API_KEY_PEPPER": randomHex(32), "BERTH_SECRET_KEY": randomHex(32), "BERTH_ISSUER": "berth-bench",
		"BERTH_PUBLIC_URL": s.baseURL, "BERTH_PSPX_URL": pspx, "BERTH_PSPY_URL": pspy,
		// The production default: one access-log line per request is part of what a request costs.
		"BERTH_LOG_LEVEL": "info",
	}
	if profile {
		s.env[ops.PprofVar] = "true"
	}
	for i, m := range allinone.Modules {
		s.env[module.AddrVar(m.Name)] = addrs[2*i]
	}
	start := func(name, bin, opsAddr string, own map[string]string) error {
		env := map[string]string{"BERTH_OPS_ADDR": opsAddr}
		for k, v := range s.env {
			env[k] = v
		}
		for k, v := range own {
			env[k] = v
		}
		p, err := procs.Start(name, bin, dir, env)
		if err != nil {
			return err
		}
		s.procs = append(s.procs, p)
		s.ready[name] = "http://" + opsAddr + ops.ReadyPath
		if profile {
			fmt.Fprintf(out, "profiler of the split's %s: http://%s/debug/pprof/\n", name, opsAddr)
		}
		return nil
	}
	for i, m := range allinone.Modules {
		dbURL, _, err := allinone.ServiceDatabase(ctx, baseURL, m.Name)
		if err != nil {
			return s, err
		}
		s.dbNames = append(s.dbNames, base+"_"+m.Name)
		if err := start(m.Name, bins[m.Name], addrs[2*i+1], map[string]string{"BERTH_GRPC_ADDR": addrs[2*i], "BERTH_DATABASE_URL": dbURL}); err != nil {
			return s, err
		}
	}
	if err := start("gateway", gatewayBin, gatewayOps, map[string]string{"BERTH_HTTP_ADDR": gatewayAddr}); err != nil {
		return s, err
	}
	for _, p := range s.procs {
		if err := p.WaitReady(time.Minute, 100*time.Millisecond, procs.HTTPOK(ctx, s.ready[p.Name])); err != nil {
			return s, err
		}
	}
	return s, nil
}

// stop stops every process, the gateway first, then NATS.
func (s *split) stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].Stop()
	}
	if s.nats != nil {
		s.nats.Close()
	}
}

// provision seeds the demo apps through the split's admin API, as an operator would, and returns
// the first app as the load drives it.
func (s *split) provision(ctx context.Context, pspx, pspy string) (seed.Demo, error) {
	var conns []*grpc.ClientConn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	dial := func(name string) (*grpc.ClientConn, error) {
		c, err := grpc.NewClient(s.env[module.AddrVar(name)], append(grpcx.ClientOptions("", nil),
			grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(s.env["BERTH_ADMIN_TOKEN"])))...)
		if err == nil {
			conns = append(conns, c)
		}
		return c, err
	}
	var admin seed.Admin
	for _, c := range []struct {
		name string
		set  func(grpc.ClientConnInterface)
	}{
		{"identity", func(cc grpc.ClientConnInterface) { admin.Identity = identityv1.NewIdentityAdminServiceClient(cc) }},
		{"tenant", func(cc grpc.ClientConnInterface) { admin.Tenant = tenantv1.NewTenantAdminServiceClient(cc) }},
		{"billing", func(cc grpc.ClientConnInterface) { admin.Billing = billingv1.NewBillingAdminServiceClient(cc) }},
	} {
		cc, err := dial(c.name)
		if err != nil {
			return seed.Demo{}, err
		}
		c.set(cc)
	}
	d, err := seed.Run(ctx, admin, seed.Options{BaseURL: s.baseURL, RedirectURI: "https://app.example.org/callback",
		Sandbox: seed.Sandbox{Pspx: pspx, Pspy: pspy}, EmailVerification: "optional"})
	if err != nil {
		return seed.Demo{}, fmt.Errorf("provision the split's demo apps: %w", err)
	}
	return d, nil
}

// cpu is the CPU time of every process of the split so far, together.
func (s *split) cpu() (time.Duration, error) {
	var total time.Duration
	for _, p := range s.procs {
		c, err := p.CPU()
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// optionalVerification makes the all-in-one's demo app sign users in at once after sign-up (its
// default policy puts a mail first): the load measures what follows a sign-up, as on the split,
// whose apps are provisioned optional.
func optionalVerification(ctx context.Context, f seed.File, appID string) error {
	c, err := grpc.NewClient(f.GRPC["identity"], append(grpcx.ClientOptions("", nil),
		grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(f.AdminToken)))...)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_, err = identityv1.NewIdentityAdminServiceClient(c).SetAppEmailVerification(ctx,
		&identityv1.SetAppEmailVerificationRequest{AppId: appID, Policy: "optional"})
	if err != nil {
		return fmt.Errorf("make the demo app's verification optional: %w", err)
	}
	return nil
}
