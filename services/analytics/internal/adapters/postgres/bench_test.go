package postgres_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/moduletest"
	"github.com/berthhq/berth/pkg/testkit/procs"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
	"github.com/berthhq/berth/services/analytics/server"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/proto/registry"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// benchKey is the read key the fake identity accepts for benchApp.
const benchKey = "bench-read-key"

// BenchmarkAnalyticsSubscriptions measures route 6 on PostgreSQL, end to end as deployed: the
// gateway binary as a process of its own (the /v1 envelope written around the stream), the
// analytics gRPC server in this process (API-key check, the count and the streamed list from one
// snapshot, the items rendered from the stored snapshots), over loopback, read to the last byte by
// an HTTP client. Each list has its own app:
//
//   - month/…: 10,000 subscriptions paid in a 31-day window, listed for that window;
//   - year/…: 100,000 subscriptions paid over 366 days, listed for all of them.
//
// Each has a baseline: the route's own list query, run with pgx on the same database and read as
// raw rows (no decoding): the least the same rows cost. `make bench` prints route/baseline. The
// route reports each process's peak RSS growth over its run (VmHWM after, less VmRSS before, the
// peak reset first), which the streaming keeps flat in the number of items: the edge's, and this
// process's (the analytics service, its pool and the client together, so an upper bound).
//
// The data is seeded through the store's own writes (snapshots of 1,000 payers and their tenants,
// each subscription's change and payment), as the consumers write it.
func BenchmarkAnalyticsSubscriptions(b *testing.B) {
	env := startBench(b)
	for _, c := range []struct {
		name  string
		items int
		days  int
	}{{"month", 10_000, 31}, {"year", 100_000, 366}} {
		appID := uuid.NewString()
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		to := from.AddDate(0, 0, c.days)
		seeded := false
		seed := func(b *testing.B) {
			if !seeded {
				env.seed(b, appID, c.items, from, to)
				seeded = true
			}
		}
		query := fmt.Sprintf("%s/v1/analytics/subscriptions?from=%s&to=%s", env.url, from.Format(time.DateOnly), to.AddDate(0, 0, -1).Format(time.DateOnly))
		b.Run(c.name+"/baseline", func(b *testing.B) {
			seed(b)
			for b.Loop() {
				if n := env.rawRows(b, appID, from, to); n != c.items {
					b.Fatalf("raw query returned %d rows, want %d", n, c.items)
				}
			}
			b.ReportMetric(float64(c.items*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(c.name+"/route", func(b *testing.B) {
			seed(b)
			env.get(b, query, appID, c.items) // warm the key cache and the connections
			self, edge := env.resetPeaks(b)
			b.ResetTimer()
			for b.Loop() {
				env.get(b, query, appID, c.items)
			}
			b.StopTimer()
			b.ReportMetric(float64(c.items*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(env.peak(b, os.Getpid())-self)/(1<<20), "MiB-peak-rss-growth")
			b.ReportMetric(float64(env.peak(b, env.edge.Pid())-edge)/(1<<20), "MiB-edge-peak-rss-growth")
		})
	}
}

type benchEnv struct {
	store *postgres.Store
	run   moduletest.Running
	edge  *procs.Process
	url   string
	ctx   context.Context
}

// startBench runs the analytics module on a fresh database, serving gRPC on loopback, behind the
// gateway binary started as its own process, with a fake identity that knows benchKey (the service
// caches the verification, as it does in production). The gateway is built from the workspace, so
// analytics needs no requirement on the gateway's module.
func startBench(b *testing.B) *benchEnv {
	idSrv := grpc.NewServer()
	identityv1.RegisterIdentityInternalServiceServer(idSrv, fakeIdentity{})
	idConn := grpctest.Serve(b, idSrv)
	run := moduletest.Start(b, server.Module, moduletest.Options{Postgres: true, Peers: map[string]grpc.ClientConnInterface{"identity": idConn}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = run.Process.GRPC().Serve(lis) }() // ends when moduletest stops the server
	root, err := procs.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bin, err := procs.Build(root, dir, "./gateway/cmd/gateway")
	if err != nil {
		b.Fatal(err)
	}
	addrs, err := procs.FreeAddrs(3)
	if err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"BERTH_HTTP_ADDR": addrs[0], "BERTH_OPS_ADDR": addrs[1],
		"BERTH_SERVICE_TOKEN": "bench-service-token", "BERTH_LOG_LEVEL": "warn"}
	// Only analytics is called; the edge needs an address for every context, and the others get
	// one nothing listens on.
	for _, c := range registry.Contexts {
		env["BERTH_"+strings.ToUpper(c.Name)+"_ADDR"] = addrs[2]
	}
	env["BERTH_ANALYTICS_ADDR"] = lis.Addr().String()
	gw, err := procs.Start("gateway", bin, dir, env)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(gw.Stop)
	if err := gw.WaitReady(time.Minute, 20*time.Millisecond, procs.HTTPOK(b.Context(), "http://"+addrs[1]+"/readyz")); err != nil {
		b.Fatal(err)
	}
	return &benchEnv{store: postgres.New(run.Process.Pool), run: run, edge: gw, url: "http://" + addrs[0], ctx: context.Background()}
}

// resetPeaks resets the peak resident sets of this process and the edge's and returns their
// resident sets now.
func (e *benchEnv) resetPeaks(b *testing.B) (self, edge int64) {
	for _, pid := range []int{os.Getpid(), e.edge.Pid()} {
		if err := procs.ResetPeakRSS(pid); err != nil {
			b.Skipf("cannot reset the peak RSS on this system: %v", err)
		}
	}
	return e.status(b, os.Getpid(), "VmRSS:"), e.status(b, e.edge.Pid(), "VmRSS:")
}

// peak is process pid's peak resident set since resetPeaks.
func (e *benchEnv) peak(b *testing.B, pid int) int64 { return e.status(b, pid, "VmHWM:") }

func (e *benchEnv) status(b *testing.B, pid int, field string) int64 {
	n, err := procs.Status(pid, field)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// fakeIdentity verifies benchKey as a read key of whatever app the caller names.
type fakeIdentity struct {
	identityv1.UnimplementedIdentityInternalServiceServer
}

func (fakeIdentity) VerifyApiKey(_ context.Context, req *identityv1.VerifyApiKeyRequest) (*identityv1.VerifiedApiKey, error) {
	if req.GetApiKey() != benchKey {
		return nil, fmt.Errorf("unknown key")
	}
	return &identityv1.VerifiedApiKey{KeyId: uuid.NewString(), AppId: req.GetClientId(), ProjectId: uuid.NewString(), Type: "read", AppEnabled: true}, nil
}

// seed writes n subscriptions of appID, each paid once at an instant spread evenly over [from, to),
// paid for by one of 1,000 users (each in a tenant of its own), through the store.
func (e *benchEnv) seed(b *testing.B, appID string, n int, from, to time.Time) {
	b.Helper()
	start := time.Now()
	const payers = 1000
	users, tenants := make([]string, payers), make([]string, payers)
	for i := range payers {
		users[i], tenants[i] = uuid.NewString(), uuid.NewString()
		tn := &tenantv1.Tenant{Kind: "tenant", Id: tenants[i], Name: fmt.Sprintf("Tenant %d GmbH", i), PspxCustomerId: "cus_" + strconv.Itoa(i),
			Mode: "subscription", PaidUntil: "2027-01-01T00:00:00Z", PaidUnits: "0", FreeUnits: "0", CompanyName: "Company " + strconv.Itoa(i),
			CompanyTaxExempt: "none", IsBusinessCustomer: true, Description: "A tenant with a short description of itself."}
		if err := e.store.PutTenant(e.ctx, app.TenantSnapshot{AppID: appID, TenantID: tenants[i], AsOf: from, Tenant: tn}); err != nil {
			b.Fatal(err)
		}
		u := &identityv1.TenantUser{Id: users[i], AppId: appID, Language: "de", Name: fmt.Sprintf("User %d", i), GivenName: "Ada", FamilyName: "Lovelace",
			Email: fmt.Sprintf("user%d@example.com", i), EmailVerified: true, NewsletterMemberId: "nl-" + strconv.Itoa(i), Locale: "de-DE",
			Zoneinfo: "Europe/Berlin", Picture: "https://images.example.com/users/" + users[i] + ".png", TenantId: true, LastSignInAt: true}
		if err := e.store.PutUser(e.ctx, app.UserSnapshot{AppID: appID, UserID: users[i], TenantRef: tenants[i], AsOf: from, User: u}); err != nil {
			b.Fatal(err)
		}
	}
	step := to.Sub(from) / time.Duration(n)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 { // the writes of a consumer, four at a time to seed faster
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				sub := fmt.Sprintf("sub_%s_%07d", appID[:8], i)
				at := from.Add(time.Duration(i) * step)
				c := domain.SubscriptionChange{
					State: domain.Subscription{ID: domain.SubscriptionItemID(appID, sub), AppID: appID, SubscriptionID: sub, TenantID: tenants[i%payers],
						UserID: users[i%payers], PriceID: "price_monthly", CustomerID: "cus_" + strconv.Itoa(i%payers), Test: true, Paid: true,
						Until: at.AddDate(0, 1, 0), Revision: 1},
					Payment: &domain.SubscriptionPayment{Key: "in_" + sub, At: at},
				}
				if err := e.store.ApplySubscription(e.ctx, c); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	if _, err := e.run.Process.Pool.Exec(e.ctx, "vacuum analyze"); err != nil { // plans and visibility as on a settled database
		b.Fatal(err)
	}
	b.Logf("seeded %d subscriptions over %s in %s", n, to.Sub(from), time.Since(start).Round(time.Millisecond))
}

// rawRows runs the route's list query and reads every row's raw bytes.
func (e *benchEnv) rawRows(b *testing.B, appID string, from, to time.Time) int {
	rows, err := e.run.Process.Pool.Query(e.ctx, postgres.ListSubscriptionsSQL, appID, from, to)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for rows.Next() {
		_ = rows.RawValues()
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// get calls the route as appID and reads the whole body, checking the count it announces.
func (e *benchEnv) get(b *testing.B, url, appID string, want int) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-API-KEY", benchKey)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", appID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(res.Body, head)
	if m := itemsLength.FindSubmatch(head[:n]); res.StatusCode != http.StatusOK || m == nil || string(m[1]) != strconv.Itoa(want) {
		b.Fatalf("route 6: %d %s", res.StatusCode, head[:n])
	}
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		b.Fatal(err)
	}
}

var itemsLength = regexp.MustCompile(`"itemsLength"\s*:\s*(\d+)`)
