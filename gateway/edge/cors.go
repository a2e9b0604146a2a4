package edge

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/route"
	"github.com/berthhq/berth/pkg/weborigin"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// CORS answers, fixed by the published interface's decisions (docs/api.md): the methods the
// routes use and the only two headers a page may send. API-key headers are never allowed, so a
// browser can never send an API key.
const (
	corsAllowMethods = "GET, POST, PUT, DELETE"
	corsAllowHeaders = "Content-Type, Authorization"
	// corsMaxAge lets a browser reuse a preflight for ten minutes: its answer depends on the route
	// alone (never on the origin), so it cannot go stale when an operator changes an app's origins.
	corsMaxAge = "600"
)

// corsRequestHeaders are the request headers a preflight may ask for, lower case.
var corsRequestHeaders = map[string]bool{"content-type": true, "authorization": true}

// withCORS answers preflights itself (they reach no service: the route decides them alone) and
// remembers the Origin of every other request so that its answer can carry it when the service
// allowed it (corsHeaders).
func withCORS(res *resolver, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			answerPreflight(w, r, res)
			return
		}
		exchangeOf(r.Context()).origin = origin
		next.ServeHTTP(w, r)
	})
}

// answerPreflight allows any origin on a route that accepts a tenant access token or no
// credentials (the actual response is what is restricted to the app's origins). Everything else
// gets no CORS header at all, so the browser never sends the request: a path and method that
// match no route answer like the routing error the request would get (404, 405, in the path's
// family); an API-key, operator, admin or service route, a request header beyond Content-Type and
// Authorization, or an Origin that is not a header-safe value answers 403 in the route's family.
func answerPreflight(w http.ResponseWriter, r *http.Request, res *resolver) {
	method := r.Header.Get("Access-Control-Request-Method")
	rpc, code := res.resolve(r, method)
	if rpc == "" {
		writeFailure(w, familyOfPath(r.URL.Path), failure{status: code, message: http.StatusText(code)})
		return
	}
	rt, _ := route.ForMethod(rpc) // the resolver only names methods that have a route option
	fam := rt.GetFamily()
	if fam == edgev1.Family_FAMILY_UNSPECIFIED {
		fam = familyOfPath(r.URL.Path)
	}
	refuse := func(validation, message string) {
		writeFailure(w, fam, failure{status: http.StatusForbidden, message: message, validation: validation})
	}
	if !rt.GetTenantToken() && !rt.GetPublic() {
		refuse("Origin", "this route takes API keys, which must never be sent from a browser")
		return
	}
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !corsRequestHeaders[h] {
			refuse("Access-Control-Request-Headers", "cross-origin requests may send only the headers Content-Type and Authorization")
			return
		}
	}
	origin := r.Header.Get("Origin")
	if !headerSafe(origin) {
		refuse("Origin", "Origin is not a valid origin")
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
}

// headerSafe accepts what a browser may send as Origin: printable ASCII without spaces, short.
func headerSafe(v string) bool {
	if v == "" || len(v) > 300 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return true
}

// corsHeaders puts Access-Control-Allow-Origin and Vary: Origin on the answer of a resolved RPC,
// success or error, when the service's access policy allowed the request's origin for the app in
// question (pkg/authn answers authn.MDAllowOrigin). This is the one piece of service metadata that
// becomes a response header, and only when it repeats the request's own Origin: a service can
// confirm an origin, never name one.
func corsHeaders(ctx context.Context, w http.ResponseWriter) {
	origin := exchangeOf(ctx).origin
	if origin == "" {
		return
	}
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok {
		return
	}
	if got := md.HeaderMD.Get(authn.MDAllowOrigin); len(got) == 1 && got[0] == origin {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Add("Vary", "Origin")
	}
}

// resolver finds the RPC that a method and path would reach, without calling it: a second
// grpc-gateway mux with the same registrations over connections that never send anything. Using
// the real routing (rather than a second table of path patterns) keeps preflights and requests
// in agreement about which route a path is.
type resolver struct {
	mux *runtime.ServeMux
}

// resolveSlot receives, through the request context, what the resolver's mux matched.
type resolveSlot struct {
	rpc    string
	status int // the routing error's status when nothing matched
}

func newResolver(ctx context.Context) (*resolver, error) {
	mux := runtime.NewServeMux(
		runtime.WithMetadata(func(ctx context.Context, r *http.Request) metadata.MD {
			if slot, ok := r.Context().Value(resolveSlot{}).(*resolveSlot); ok {
				slot.rpc, _ = runtime.RPCMethod(ctx)
			}
			return nil
		}),
		runtime.WithErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, error) {
		}),
		runtime.WithRoutingErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, _ http.ResponseWriter, r *http.Request, code int) {
			if slot, ok := r.Context().Value(resolveSlot{}).(*resolveSlot); ok {
				slot.status = code
			}
		}),
		runtime.WithDisableHTTPMethodOverride(),
		runtime.WithDisablePathLengthFallback(),
	)
	for _, be := range backends {
		for _, svc := range be.services {
			if err := svc.Register(ctx, mux, noCalls{}); err != nil {
				return nil, err
			}
		}
	}
	return &resolver{mux: mux}, nil
}

// resolve returns the full RPC name that method on r's path reaches, or "" and the routing
// error's status (404 unknown path, 405 wrong method, 400 malformed path).
func (res *resolver) resolve(r *http.Request, method string) (string, int) {
	slot := &resolveSlot{status: http.StatusNotFound}
	u := *r.URL
	probe, err := http.NewRequestWithContext(context.WithValue(r.Context(), resolveSlot{}, slot), method, "/", http.NoBody)
	if err != nil { // a method name that is not a token
		return "", http.StatusMethodNotAllowed
	}
	probe.URL = &url.URL{Path: u.Path, RawPath: u.RawPath}
	res.mux.ServeHTTP(discardWriter{}, probe)
	if slot.rpc != "" {
		if _, ok := route.ForMethod(slot.rpc); ok {
			return slot.rpc, 0
		}
		return "", http.StatusNotFound
	}
	return "", slot.status
}

// noCalls is the resolver's connection: the mux resolves the route before it calls, and the call
// fails at once without leaving the process.
type noCalls struct{}

var errResolveOnly = status.Error(codes.Unavailable, "route resolution only")

func (noCalls) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return errResolveOnly
}

func (noCalls) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errResolveOnly
}

// discardWriter swallows the resolver mux's output.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// Error answers in the two API families carry Access-Control-Allow-Origin for any origin that some
// app allows, not only the app in question: a browser hides an answer without it behind a network
// error, and an app must tell "sign in again" (401 for an expired token, 403 for a deleted user)
// and "no such route" (404) from "network down". Error bodies hold no data, so widening whose page
// may read them gives nothing away; success answers keep the per-app rule (corsHeaders).
const (
	// originsTTL bounds how long the edge believes identity's list of every app's origins: an
	// origin an operator adds reaches error answers within it. No event reaches the edge, which
	// talks to services over gRPC only, so the list simply expires.
	originsTTL = 30 * time.Second
	// originsRetry is how long a failed listing is not retried: the previous list (or none) serves
	// until then, so an identity outage never adds a call to every error answer.
	originsRetry = 5 * time.Second
	// originsTimeout bounds the listing a cold or stale cache waits for inside an error answer.
	originsTimeout = 2 * time.Second
)

// anyAppOrigins is the cached set of the origins some app allows. On a warm cache a lookup is one
// map read under a mutex: no call per request.
type anyAppOrigins struct {
	list func(context.Context) ([]string, error) // identity's ListWebOrigins
	now  func() time.Time

	fetch   sync.Mutex // one listing at a time; waiters then find the fresh set
	mu      sync.Mutex
	set     map[string]bool
	expires time.Time
}

func newAnyAppOrigins(c identityv1.IdentityInternalServiceClient) *anyAppOrigins {
	return &anyAppOrigins{
		list: func(ctx context.Context) ([]string, error) {
			res, err := c.ListWebOrigins(ctx, &identityv1.ListWebOriginsRequest{})
			return res.GetOrigins(), err
		},
		now: time.Now,
	}
}

// current is the set, listed again when it has expired.
func (o *anyAppOrigins) current(ctx context.Context) map[string]bool {
	if set, ok := o.fresh(); ok {
		return set
	}
	o.fetch.Lock()
	defer o.fetch.Unlock()
	if set, ok := o.fresh(); ok { // another request listed while this one waited
		return set
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), originsTimeout)
	defer cancel()
	list, err := o.list(ctx)
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.expires = o.now().Add(originsRetry) // keep what was listed before
		return o.set
	}
	set := make(map[string]bool, len(list))
	for _, origin := range list {
		set[origin] = true
	}
	o.set, o.expires = set, o.now().Add(originsTTL)
	return set
}

func (o *anyAppOrigins) fresh() (map[string]bool, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.set, o.now().Before(o.expires)
}

// confirmError adds Access-Control-Allow-Origin and Vary: Origin to an error answer of r when r's
// Origin is one that some app allows and the answer does not carry the header already (the app in
// question allowed it). Only the two API families qualify: the hosted pages' error answers are
// HTML forms for a person's browser, not for scripts.
func (o *anyAppOrigins) confirmError(r *http.Request, h http.Header) {
	origin := r.Header.Get("Origin")
	if o == nil || !headerSafe(origin) || h.Get("Access-Control-Allow-Origin") != "" || !inAPIFamily(r.URL.Path) {
		return
	}
	normalised, err := weborigin.Parse(origin)
	if err != nil || !o.current(r.Context())[normalised] {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin) // verbatim: the browser compares it with what it sent
	h.Add("Vary", "Origin")
}

// inAPIFamily reports whether path belongs to /v1 or /api/v1 (or would, as an unknown path there).
func inAPIFamily(path string) bool {
	for _, prefix := range []string{"/v1", "/api"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}
