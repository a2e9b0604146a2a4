package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/pkg/testkit/procs"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// gateway is the edge's name among the replicas; the services go by their module names.
const gateway = "gateway"

// The deployment under test derives from the module list: every module of allinone.Modules and
// the edge, each twice, except those named in singleReplica.
var (
	// order is how the processes start: the modules in startOrder's order, then the edges.
	order = append(startOrder(allinone.Modules), gateway)
	// replicaCounts is how many processes of each run.
	replicaCounts = replicaCountsOf(order)
)

// singleReplica are the modules the test runs once: analytics, as its read model's single writer
// would in a small deployment; its kill shows that events wait for it in JetStream.
var singleReplica = []string{"analytics"}

// startOrder is the modules' names, the ones others call (Module.Peers) first, so that readiness
// checks see them: each step takes the first module of the list whose peers have all started, or,
// when the remaining modules call one another (identity and tenant do), the first remaining.
func startOrder(modules []module.Module) []string {
	var started []string
	remaining := slices.Clone(modules)
	for len(remaining) > 0 {
		next := 0
		for i, m := range remaining {
			if !slices.ContainsFunc(m.Peers, func(p string) bool { return !slices.Contains(started, p) }) {
				next = i
				break
			}
		}
		started = append(started, remaining[next].Name)
		remaining = slices.Delete(remaining, next, next+1)
	}
	return started
}

// replicaCountsOf gives each of names two replicas, one if it is in singleReplica.
func replicaCountsOf(names []string) map[string]int {
	counts := make(map[string]int, len(names))
	for _, name := range names {
		counts[name] = 2
		if slices.Contains(singleReplica, name) {
			counts[name] = 1
		}
	}
	return counts
}

// replica is one process of the cluster, restartable with the same binary, addresses and
// environment.
type replica struct {
	name string // "identity-2"
	bin  string
	env  map[string]string
	ops  string // its /readyz and /metrics address
	proc *procs.Process
}

func (r *replica) start(ctx context.Context, dir string) error {
	p, err := procs.Start(r.name, r.bin, dir, r.env)
	if err != nil {
		return err
	}
	r.proc = p
	return p.WaitReady(time.Minute, 50*time.Millisecond, procs.HTTPOK(ctx, "http://"+r.ops+ops.ReadyPath))
}

// cluster is the running deployment.
type cluster struct {
	dir      string
	replicas map[string][]*replica // by service, in start order
	lb       *balancer
	demo     seed.Demo
	dbs      map[string]*pgxpool.Pool // each service's database, for comparing read models with it
	spans    *collector               // where every process exports its traces
}

// startCluster builds the binaries and starts every replica, the sandboxes and the balancer, then
// provisions the demo apps through the admin API.
func startCluster(t testing.TB, natsURL string) *cluster {
	t.Helper()
	ctx := context.Background()
	root, err := procs.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bins := map[string]string{}
	for _, name := range order {
		pkg := "./services/" + name + "/cmd/" + name
		if name == gateway {
			pkg = "./gateway/cmd/gateway"
		}
		if bins[name], err = procs.Build(root, dir, pkg); err != nil {
			t.Fatal(err)
		}
	}
	sandboxBin, err := procs.Build(root, dir, "./services/sandbox/cmd/sandbox")
	if err != nil {
		t.Fatal(err)
	}

	n := 1
	for _, c := range replicaCounts {
		n += 2 * c
	}
	addrs, err := procs.FreeAddrs(n)
	if err != nil {
		t.Fatal(err)
	}
	take := func() string { a := addrs[0]; addrs = addrs[1:]; return a }

	sandboxAddr := take()
	sandbox, err := procs.Start("sandbox", sandboxBin, dir, map[string]string{"BERTH_SANDBOX_ADDR": sandboxAddr, "BERTH_SANDBOX_TIME_SCALE": "0.0001"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sandbox.Stop)
	if err := sandbox.WaitReady(time.Minute, 50*time.Millisecond, procs.HTTPOK(ctx, "http://"+sandboxAddr+"/healthz")); err != nil {
		t.Fatal(err)
	}

	c := &cluster{dir: dir, replicas: map[string][]*replica{}, dbs: map[string]*pgxpool.Pool{}}
	listen := map[string][]string{} // service -> its replicas' gRPC (edges: HTTP) addresses
	for _, name := range order {
		for i := range replicaCounts[name] {
			r := &replica{name: fmt.Sprintf("%s-%d", name, i+1), bin: bins[name], ops: take(), env: map[string]string{}}
			addr := take()
			listen[name] = append(listen[name], addr)
			r.env["BERTH_OPS_ADDR"] = r.ops
			if name == gateway {
				r.env["BERTH_HTTP_ADDR"] = addr
				// The balancer is the end users' proxy: the login page believes the address it
				// forwards, so each simulated user has an address of its own, as in production.
				r.env["BERTH_TRUSTED_PROXIES"] = "127.0.0.1"
			} else {
				r.env["BERTH_GRPC_ADDR"] = addr
			}
			c.replicas[name] = append(c.replicas[name], r)
		}
	}
	lb, err := newBalancer(listen[gateway])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lb.close)
	c.lb = lb
	if c.spans, err = newCollector(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.spans.close)

	common := map[string]string{
		"BERTH_NATS_URL": natsURL, "BERTH_EVENT_PREFIX": "cluster" + randomHex(4),
		"BERTH_ADMIN_TOKEN": randomHex(16), "BERTH_SERVICE_TOKEN": randomHex(16),
		"BERTH_API_KEY_PEPPER": randomHex(32), "BERTH_SECRET_KEY": randomHex(32), "BERTH_ISSUER": "berth-cluster",
		"BERTH_PUBLIC_URL": lb.url(), "BERTH_PSPX_URL": "http://" + sandboxAddr + mount.PspxPath,
		"BERTH_PSPY_URL": "http://" + sandboxAddr + mount.PspyPath, "BERTH_LOG_LEVEL": "info",
		// Every process exports its spans to the test's collector, batched every 200 ms.
		"OTEL_EXPORTER_OTLP_ENDPOINT": c.spans.url, "OTEL_BSP_SCHEDULE_DELAY": "200",
	}
	// Before the replicas' cleanups, so it runs once they stopped.
	natstest.DeleteStreamsAtCleanup(t, natsURL, common["BERTH_EVENT_PREFIX"])
	for _, m := range allinone.Modules {
		common[module.AddrVar(m.Name)] = strings.Join(listen[m.Name], ",")
	}
	noMigrations := func(context.Context, *pgxpool.Pool) error { return nil }
	for _, name := range order {
		var dbURL string
		if name != gateway {
			// The replicas of a service share its database; each migrates it on start (under
			// an advisory lock, so starting together is safe).
			dbURL = pgtest.URL(t, "cluster-"+name, noMigrations)
			pool, err := pgxpool.New(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			c.dbs[name] = pool
		}
		for _, r := range c.replicas[name] {
			for k, v := range common {
				r.env[k] = v
			}
			if dbURL != "" {
				r.env["BERTH_DATABASE_URL"] = dbURL
			}
			if name == "outbound" {
				// The app's receiver is the test's, on loopback; retries come a hundred times
				// sooner, so one that a kill interrupted lands within the test.
				r.env["BERTH_OUTBOUND_ALLOW_PRIVATE"] = "true"
				r.env["BERTH_OUTBOUND_TIME_SCALE"] = "0.01"
			}
		}
	}
	// The migration step runs first, as the Kubernetes manifests' init containers do; the
	// replicas then find their schemas in place.
	for _, name := range order[:len(order)-1] {
		r := c.replicas[name][0]
		p, err := procs.Start(name+"-migrate", r.bin, dir, map[string]string{"BERTH_DATABASE_URL": r.env["BERTH_DATABASE_URL"]}, "migrate")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(time.Minute); err != nil {
			t.Fatalf("migration step: %v", err)
		}
	}
	// Replicas of one service start together, as a rollout's would.
	for _, name := range order {
		errs := make(chan error, len(c.replicas[name]))
		for _, r := range c.replicas[name] {
			go func() { errs <- r.start(ctx, dir) }()
		}
		for _, r := range c.replicas[name] {
			t.Cleanup(func() {
				if r.proc == nil {
					return
				}
				r.proc.Stop()
				if t.Failed() {
					t.Logf("the end of %s's log:\n%s", r.name, r.proc.Tail())
				}
			})
		}
		var failed []error
		for range c.replicas[name] {
			if err := <-errs; err != nil {
				failed = append(failed, err)
			}
		}
		if len(failed) > 0 {
			t.Fatal(failed)
		}
	}

	c.demo = provision(t, common["BERTH_ADMIN_TOKEN"], common, lb.url(), "http://"+sandboxAddr)
	return c
}

// provision creates the demo apps through the admin API, as an operator would.
func provision(t testing.TB, adminToken string, common map[string]string, baseURL, sandbox string) seed.Demo {
	t.Helper()
	dial := func(name string) *grpc.ClientConn {
		target := common[module.AddrVar(name)]
		conn, err := grpc.NewClient(grpcx.ListScheme+":///"+target, append(grpcx.ClientOptions("", nil),
			grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(adminToken)))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return conn
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	demo, err := seed.Run(ctx, seed.Admin{
		Identity: identityv1.NewIdentityAdminServiceClient(dial("identity")),
		Tenant:   tenantv1.NewTenantAdminServiceClient(dial("tenant")),
		Billing:  billingv1.NewBillingAdminServiceClient(dial("billing")),
	}, seed.Options{BaseURL: baseURL, RedirectURI: "https://app.example.org/callback",
		// Optional verification: the load signs users up and goes straight on to their tokens.
		Sandbox: seed.Sandbox{Pspx: sandbox + mount.PspxPath, Pspy: sandbox + mount.PspyPath}, EmailVerification: "optional"})
	if err != nil {
		t.Fatalf("provision the demo apps: %v", err)
	}
	return demo
}

// scrape sums a counter's samples on a replica's /metrics.
func (r *replica) scrape(ctx context.Context, metric string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.ops+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	return sumCounter(res.Body, metric)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
