package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/pkg/testkit/procs"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Phases of the run. The load runs throughout; balance is measured over the steady phase, before
// any kill: at least steady, and longer (up to steadyCap) until every service has answered enough
// requests to judge, since a loaded machine runs the load slower; each kill leaves its replica
// down for downFor under load before it starts again.
const (
	warmUp    = 3 * time.Second
	steady    = 8 * time.Second
	steadyCap = time.Minute
	downFor   = time.Second
	afterKill = 1500 * time.Millisecond
	workers   = 6
)

// killed is when one replica was killed: from the signal until the process was gone.
type killed struct {
	replica    string
	sent, gone time.Time
}

func TestAClusterOfReplicasServesThePublishedFlowsThroughAKillOfEachServicesReplica(tt *testing.T) {
	t := withRecap(tt)
	if os.Getenv("BERTH_TEST_CLUSTER") == "" {
		t.Skip("the multi-process cluster test runs with make test-cluster (BERTH_TEST_CLUSTER=1)")
	}
	natsURL := os.Getenv("TEST_NATS_URL")
	if natsURL == "" {
		natsURL = "nats://127.0.0.1:4222"
	}
	if u, err := url.Parse(natsURL); err != nil {
		t.Fatal(err)
	} else if c, err := net.DialTimeout("tcp", u.Host, 2*time.Second); err != nil {
		t.Fatalf("the cluster test needs a NATS server with JetStream (TEST_NATS_URL, else %s): %v", natsURL, err)
	} else {
		c.Close()
	}
	began := time.Now().UTC()
	c := startCluster(t, natsURL)
	t.Logf("cluster up: %d processes", c.processes())

	hooks := c.subscribeApp(t)
	l := newLoad(c.demo, c.lb.url())
	ctx, stop := context.WithCancel(context.Background())
	done := l.run(ctx, workers)
	time.Sleep(warmUp)
	before := c.counters(t)
	time.Sleep(steady)
	after := c.counters(t)
	for deadline := time.Now().Add(steadyCap - steady); !c.enoughToJudge(before, after) && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		after = c.counters(t)
	}
	c.checkBalance(t, before, after)

	var kills []killed
	for _, name := range order {
		r := c.replicas[name][len(c.replicas[name])-1]
		k := killed{replica: r.name, sent: time.Now()}
		r.proc.Kill()
		k.gone = time.Now()
		kills = append(kills, k)
		time.Sleep(downFor)
		if err := r.start(context.Background(), c.dir); err != nil {
			stop()
			t.Fatalf("restart %s: %v", r.name, err)
		}
		t.Logf("%s killed, back and ready %s later", r.name, time.Since(k.gone).Round(time.Millisecond))
		time.Sleep(afterKill)
	}
	stop()
	done.Wait()

	checkFailures(t, &l.rec, kills)
	c.checkExactlyOnce(t, l, began)
	c.checkEveryEventReachedTheApp(t, hooks)
	c.checkATraceCrossesProcesses(t)
	c.checkTheEdgeServesTheOthersWithAServiceDown(t, l)
}

// checkTheEdgeServesTheOthersWithAServiceDown stops every billing replica and holds the edges to
// their own readiness: each stays ready, identity's and tenant's routes answer as before, and a
// billing route answers 500 in its family's envelope, so a load balancer keeps every edge and only
// billing's routes fail, and the edges' metrics name billing as the backend that is down. It runs
// last: billing stays down.
func (c *cluster) checkTheEdgeServesTheOthersWithAServiceDown(t testing.TB, l *load) {
	t.Helper()
	for _, r := range c.replicas["billing"] {
		r.proc.Kill()
	}
	ctx := context.Background()
	readKey := map[string]string{"X-API-KEY": c.demo.ReadKey, "X-API-KEY-TYPE": "read", "X-CLIENT-ID": c.demo.AppID}
	// A balanced gRPC connection needs a moment to see that none of its addresses answers.
	testkit.Eventually(t, "a billing route answers 500 once billing is down", func() bool {
		status, _, _, err := l.send(ctx, l.client, http.MethodGet, l.base+"/v1/apps/"+c.demo.AppID+"/promotions", readKey, "")
		return err == nil && status == http.StatusInternalServerError
	})
	status, body, _, err := l.send(ctx, l.client, http.MethodGet, l.base+"/v1/apps/"+c.demo.AppID+"/promotions", readKey, "")
	var envelope struct {
		Success *bool  `json:"success"`
		Error   string `json:"error"`
	}
	if err != nil || json.Unmarshal([]byte(body), &envelope) != nil || envelope.Success == nil || *envelope.Success || envelope.Error == "" {
		t.Errorf("route 12 with billing down answered %d %q (%v), want a 500 in the /v1 envelope", status, body, err)
	}
	for _, r := range c.replicas[gateway] {
		if err := procs.HTTPOK(ctx, "http://"+r.ops+ops.ReadyPath)(); err != nil {
			t.Errorf("%s's readiness with billing down: %v, want 200: a load balancer would take it out", r.name, err)
		}
	}
	for _, path := range []string{"/v1/users/" + c.demo.UserIDs[0], "/v1/tenants/" + c.demo.TenantID} {
		if err := l.getData(ctx, path, readKey, nil); err != nil {
			t.Errorf("GET %s with billing down: %v, want identity's and tenant's routes served", path, err)
		}
	}
	// The edge that answered route 12 counted billing's failed call under billing's name.
	const downMetric = `berth_edge_backend_calls_total{backend="billing",code="Unavailable"} `
	var named bool
	for _, r := range c.replicas[gateway] {
		res, err := http.Get("http://" + r.ops + ops.MetricsPath)
		if err != nil {
			t.Errorf("%s's metrics: %v", r.name, err)
			continue
		}
		body, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			t.Errorf("%s's metrics: %v", r.name, err)
		}
		named = named || strings.Contains(string(body), downMetric)
	}
	if !named {
		t.Errorf("no edge's metrics hold %q: they do not say which backend is down", strings.TrimSpace(downMetric))
	}
}

// checkATraceCrossesProcesses looks, among the traces the processes exported, for a sign-up's:
// one trace holding the edge's span, identity's and tenant's gRPC server spans and analytics'
// span applying an event the sign-up wrote, each exported by its own process.
func (c *cluster) checkATraceCrossesProcesses(t testing.TB) {
	t.Helper()
	var seen int
	testkit.Eventually(t, "a trace spans the edge, identity, tenant and an analytics consumer", func() bool {
		traces := c.spans.traces()
		seen = len(traces)
		for _, spans := range traces {
			has := map[string]bool{}
			for _, s := range spans {
				switch {
				case s.service == gateway && s.kind == tracepb.Span_SPAN_KIND_SERVER:
					has["edge"] = true
				case s.service == "identity" && s.kind == tracepb.Span_SPAN_KIND_SERVER:
					has["identity"] = true
				case s.service == "tenant" && s.kind == tracepb.Span_SPAN_KIND_SERVER:
					has["tenant"] = true
				case s.service == "analytics" && s.kind == tracepb.Span_SPAN_KIND_CONSUMER:
					has["analytics"] = true
				}
			}
			if len(has) == 4 {
				t.Logf("trace %s crosses %d spans: the edge, identity, tenant and analytics applying its events", spans[0].traceID, len(spans))
				return true
			}
		}
		return false
	})
	t.Logf("%d traces exported by the cluster's processes", seen)
}

func (c *cluster) processes() int {
	n := 1 // the sandboxes
	for _, rs := range c.replicas {
		n += len(rs)
	}
	return n
}

// checkFailures fails the test for every failed call that was not in flight at a kill: one that
// began before a replica was gone and ended after its kill was sent. Anything else (a call that
// started once the replica was gone and still failed) means the cluster did not route around it.
func checkFailures(t testing.TB, rec *recorder, kills []killed) {
	t.Helper()
	perOp := map[string][2]int{} // op -> calls, failed in flight
	var stray []string
	for _, c := range rec.calls {
		n := perOp[c.op]
		n[0]++
		if c.err != nil {
			inFlight := false
			for _, k := range kills {
				if !c.start.After(k.gone) && !c.end.Before(k.sent) {
					inFlight = true
				}
			}
			if inFlight {
				n[1]++
			} else {
				stray = append(stray, fmt.Sprintf("%s at %s (%s): %v", c.op, c.start.Format("15:04:05.000"), c.end.Sub(c.start).Round(time.Millisecond), c.err))
			}
		}
		perOp[c.op] = n
	}
	ops := make([]string, 0, len(perOp))
	for op := range perOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "\n  %-18s %5d calls, %d failed in flight at a kill", op, perOp[op][0], perOp[op][1])
	}
	t.Logf("load: %d calls%s", len(rec.calls), b.String())
	for _, k := range kills {
		t.Logf("kill %s at %s", k.replica, k.sent.Format("15:04:05.000"))
	}
	if len(stray) > 0 {
		t.Errorf("%d calls failed that were not in flight at a kill:\n  %s", len(stray), strings.Join(stray, "\n  "))
	}
	if len(rec.calls) < 100 {
		t.Errorf("only %d calls: the load did not run", len(rec.calls))
	}
}
