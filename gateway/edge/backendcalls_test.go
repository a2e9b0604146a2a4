package edge

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// With one backend service down the edge stays ready and serves the others (its readiness is its
// own), so its metrics must say which service is failing: every call the edge makes is counted
// under its backend's name and the code it ended with, the down service's as Unavailable, while
// the route counts alone would only show 500s.
func TestTheEdgesMetricsNameTheBackendThatIsDown(t *testing.T) {
	// Nothing listens on port 1: every call to billing fails to connect, as with its pods gone.
	down, err := grpc.NewClient("passthrough:///127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = down.Close() })
	h := newHarness(t, func(conns map[string]grpc.ClientConnInterface) { conns["billing"] = down })
	h.tenant.program(mGetTenant, answer{resp: &tenantv1.Tenant{Id: "t1"}})
	count := func(backend, code string) float64 {
		return testutil.ToFloat64(backendCalls.WithLabelValues(backend, code))
	}
	billingDown, billingOK := count("billing", "Unavailable"), count("billing", "OK")
	tenantOK, tenantDown := count("tenant", "OK"), count("tenant", "Unavailable")

	if rec := h.do(t, http.MethodGet, "/v1/apps/app/promotions", "", readKey); rec.Code != http.StatusInternalServerError {
		t.Fatalf("route 12 with billing down = %d, want 500 in its family:\n%s", rec.Code, rec.Body)
	}
	if rec := h.do(t, http.MethodGet, "/v1/tenants/t1", "", readKey); rec.Code != http.StatusOK {
		t.Fatalf("route 5 with billing down = %d, want 200:\n%s", rec.Code, rec.Body)
	}

	for _, c := range []struct {
		backend, code string
		before, want  float64
	}{
		{"billing", "Unavailable", billingDown, 1},
		{"billing", "OK", billingOK, 0},
		{"tenant", "OK", tenantOK, 1},
		{"tenant", "Unavailable", tenantDown, 0},
	} {
		if got := count(c.backend, c.code) - c.before; got != c.want {
			t.Errorf("berth_edge_backend_calls_total{backend=%q,code=%q} grew by %v, want %v", c.backend, c.code, got, c.want)
		}
	}
}

// A streamed list is one call: counted once when its end is read, with the code it ended with.
func TestAStreamedListCountsAsOneBackendCallWithTheCodeItEndedWith(t *testing.T) {
	for _, tc := range []struct {
		name string
		list func(lister) error
		code string
	}{
		{"a list of three chunks", sendItems(300, 128, 300), "OK"},
		{"a list that fails before its first chunk", failing(status.Error(codes.Unavailable, "store gone")), "Unavailable"},
		{"a list that fails after its first chunk", thenFail(sendItems(10, 128, 20), status.Error(codes.Unavailable, "store gone")), "Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.lists.list = tc.list
			before := map[string]float64{}
			for _, code := range []string{"OK", "Unavailable"} {
				before[code] = testutil.ToFloat64(backendCalls.WithLabelValues("analytics", code))
			}
			func() {
				defer func() { _ = recover() }() // the edge aborts a list that fails after its first bytes
				h.do(t, http.MethodGet, listRoutes[0].path, "", readKey)
			}()
			for code, was := range before {
				want := 0.0
				if code == tc.code {
					want = 1
				}
				if got := testutil.ToFloat64(backendCalls.WithLabelValues("analytics", code)) - was; got != want {
					t.Errorf("analytics calls counted %s grew by %v, want %v", code, got, want)
				}
			}
		})
	}
}
