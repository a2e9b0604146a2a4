package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/pay"
	"github.com/berthhq/berth/gateway/recovery"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

func TestRouteKeyIsWhatATemplateFixesOfEveryPathItMatches(t *testing.T) {
	for _, tc := range []struct {
		template string
		want     routeKey
	}{
		{"/v1/users/{userId}", routeKey{"v1/users", 3}},
		{"/v1/users/me", routeKey{"v1/users/me", 3}},
		{"/api/v1/tokens", routeKey{"api/v1/tokens", 3}},
		{"/apps/{appId}/.well-known/jwks.json", routeKey{"apps", 4}},
		{"/v1/tenants/{tenantId}/pspx-invoices", routeKey{"v1/tenants", 4}},
		{"/v1/{name=messages/*}", routeKey{"v1", 3}},
		{"/v1/{name=files/**}", routeKey{"v1", openCount}},
		{"/v1/**", routeKey{"v1", openCount}},
		{"/v1/*/things", routeKey{"v1", 3}},
		{"/v1/things:batchGet", routeKey{"v1", 2}},
		{"/{id}", routeKey{"", 1}},
		{"/login", routeKey{"login", 1}},
	} {
		got, err := keyOf(tc.template)
		if err != nil || got != tc.want {
			t.Errorf("keyOf(%q) = %+v, %v; want %+v", tc.template, got, err, tc.want)
		}
	}
	for _, bad := range []string{"v1/users", "/v1/{userId", "/v1/{=x}"} {
		if k, err := keyOf(bad); err == nil {
			t.Errorf("keyOf(%q) = %+v, want an error", bad, k)
		}
	}
}

// outcome is what a mux made of a request without calling anything: the RPC it resolved, or the
// routing error's status.
type outcome struct {
	rpc    string
	status int
}

type outcomeSlot struct{ outcome }

// probeDispatcher is a dispatcher over the edge's real route table whose muxes record what they
// resolved instead of calling a backend.
func probeDispatcher(t *testing.T) *dispatcher {
	t.Helper()
	d := newDispatcher(func() *runtime.ServeMux {
		return runtime.NewServeMux(
			runtime.WithMetadata(func(ctx context.Context, r *http.Request) metadata.MD {
				r.Context().Value(outcomeSlot{}).(*outcomeSlot).rpc, _ = runtime.RPCMethod(ctx)
				return nil
			}),
			runtime.WithErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, error) {
			}),
			runtime.WithRoutingErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, _ http.ResponseWriter, r *http.Request, code int) {
				r.Context().Value(outcomeSlot{}).(*outcomeSlot).status = code
			}),
			runtime.WithDisableHTTPMethodOverride(),
			runtime.WithDisablePathLengthFallback(),
		)
	})
	page := func(_ http.ResponseWriter, r *http.Request, _ map[string]string) {
		r.Context().Value(outcomeSlot{}).(*outcomeSlot).rpc = "page " + r.URL.Path
	}
	for _, be := range backends {
		for _, svc := range be.services {
			if err := d.register(context.Background(), svc, noCalls{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range be.raw {
			if err := m(probePaths{d, page}, noCalls{}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range []struct{ method, path string }{
		{http.MethodGet, login.Path}, {http.MethodPost, login.Path}, {http.MethodGet, recovery.Path}, {http.MethodPost, recovery.Path}, {http.MethodGet, pay.Path}, {http.MethodGet, pay.ReturnPath}, {http.MethodGet, OpenAPIPath},
	} {
		if err := d.HandlePath(p.method, p.path, page); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// probePaths mounts a module's raw routes on the probe with the probe's page handler, which
// records the route instead of forwarding anything.
type probePaths struct {
	d    *dispatcher
	page runtime.HandlerFunc
}

func (p probePaths) HandlePath(method, path string, _ runtime.HandlerFunc) error {
	return p.d.HandlePath(method, path, p.page)
}

func serveProbe(h http.Handler, method, target string) outcome {
	slot := &outcomeSlot{}
	r := httptest.NewRequest(method, target, nil).WithContext(context.WithValue(context.Background(), outcomeSlot{}, slot))
	h.ServeHTTP(httptest.NewRecorder(), r)
	return slot.outcome
}

// samplePath fills a template's variables with a value each ("{name=messages/*}" with messages/x1).
func samplePath(template string) string {
	var segs []string
	for seg := range splitTemplate(template[1:]) {
		if inner, ok := strings.CutPrefix(seg, "{"); ok {
			_, pattern, hasPattern := strings.Cut(strings.TrimSuffix(inner, "}"), "=")
			seg = "x1"
			if hasPattern {
				seg = strings.NewReplacer("**", "x1/x2", "*", "x1").Replace(pattern)
			}
		}
		segs = append(segs, seg)
	}
	return "/" + strings.Join(segs, "/")
}

func TestDispatchedRequestsReachWhatTheMuxOfAllRoutesWouldReach(t *testing.T) {
	d := probeDispatcher(t)
	type request struct{ method, target string }
	var reqs []request
	files := protoregistry.GlobalFiles
	for _, be := range backends {
		for _, svc := range be.services {
			desc, err := files.FindDescriptorByName(protoreflect.FullName(svc.Name))
			if err != nil {
				t.Fatal(err)
			}
			methods := desc.(protoreflect.ServiceDescriptor).Methods()
			for i := range methods.Len() {
				for _, b := range edgev1.HTTPBindings(methods.Get(i)) {
					p := samplePath(b.Path)
					// The route, the route under every other method (405 or another route), one
					// segment more and one less (404 or a neighbour), a trailing slash, and an
					// escaped slash inside the last segment.
					for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
						reqs = append(reqs, request{m, p})
					}
					reqs = append(reqs, request{b.Method, p + "/extra"}, request{b.Method, p[:strings.LastIndex(p, "/")+1]},
						request{b.Method, p + "/"}, request{b.Method, p + "%2Fx"})
				}
			}
		}
	}
	reqs = append(reqs,
		request{http.MethodGet, "/"}, request{http.MethodGet, "/nowhere"}, request{http.MethodGet, "//v1/users/x1"},
		request{http.MethodGet, "/v1/users/me"}, request{http.MethodGet, "/v1/tenants/me"},
		request{http.MethodGet, login.Path}, request{http.MethodPost, login.Path}, request{http.MethodGet, pay.ReturnPath},
		request{http.MethodGet, recovery.Path}, request{http.MethodPost, recovery.Path},
		request{http.MethodPost, PspxWebhookPath}, request{http.MethodGet, PspyWebhookPath}, request{http.MethodGet, OpenAPIPath},
		request{http.MethodGet, "/v1/users/x1:verb"},
	)
	if len(reqs) < 100 {
		t.Fatalf("only %d sample requests: the route table was not read", len(reqs))
	}
	for _, rq := range reqs {
		want, got := serveProbe(d.all, rq.method, rq.target), serveProbe(d, rq.method, rq.target)
		if got != want {
			t.Errorf("%s %s: dispatched to %+v, the mux of all routes resolves %+v", rq.method, rq.target, got, want)
		}
	}
}

func TestHotReadRoutesAreDispatchedToTheirServicesMux(t *testing.T) {
	d := probeDispatcher(t)
	for _, target := range []string{"/v1/users/8d0f6c1e-2f4a-4c55-9a64-2f1d6f3c8b11", "/v1/tenants/8d0f6c1e-2f4a-4c55-9a64-2f1d6f3c8b11", "/v1/users/me"} {
		if h := d.muxFor(httptest.NewRequest(http.MethodGet, target, nil)); h == http.Handler(d.all) {
			t.Errorf("GET %s goes to the mux of all routes, want its service's", target)
		}
	}
	// Pages and routes shared by two services stay on the mux of all routes.
	for _, target := range []string{login.Path, recovery.Path, pay.ReturnPath, "/v1/users/x1%2Fx2", "/nowhere"} {
		if h := d.muxFor(httptest.NewRequest(http.MethodGet, target, nil)); h != http.Handler(d.all) {
			t.Errorf("GET %s goes to a service's mux, want the mux of all routes", target)
		}
	}
}
