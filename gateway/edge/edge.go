package edge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/gateway/login"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Backends are the gRPC connections the edge forwards to, one per bounded context.
type Backends struct {
	Identity  grpc.ClientConnInterface // serves IdentityService, TokenService, OperatorService and the login page
	Tenant    grpc.ClientConnInterface // serves TenantService
	Analytics grpc.ClientConnInterface // serves AnalyticsService
}

// backend registers one HTTP-bound gRPC service on the mux. Registration goes through generated
// clients over real connections (never Register...HandlerServer), so every call passes the
// services' interceptors exactly as a direct gRPC caller's would.
type backend struct {
	name     string
	conn     func(Backends) grpc.ClientConnInterface
	register func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error
}

// backends is the registration table; a new context (billing, analytics, webhooks) is one row here
// plus its field in Backends.
var backends = []backend{
	{
		name: "identity",
		conn: func(b Backends) grpc.ClientConnInterface { return b.Identity },
		register: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
			return identityv1.RegisterIdentityServiceHandlerClient(ctx, mux, identityv1.NewIdentityServiceClient(cc))
		},
	},
	{
		name: "identity operators",
		conn: func(b Backends) grpc.ClientConnInterface { return b.Identity },
		register: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
			return identityv1.RegisterOperatorServiceHandlerClient(ctx, mux, identityv1.NewOperatorServiceClient(cc))
		},
	},
	{
		name: "identity tokens",
		conn: func(b Backends) grpc.ClientConnInterface { return b.Identity },
		register: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
			return identityv1.RegisterTokenServiceHandlerClient(ctx, mux, identityv1.NewTokenServiceClient(cc))
		},
	},
	{
		name: "tenant",
		conn: func(b Backends) grpc.ClientConnInterface { return b.Tenant },
		register: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
			return tenantv1.RegisterTenantServiceHandlerClient(ctx, mux, tenantv1.NewTenantServiceClient(cc))
		},
	},
	{
		name: "analytics",
		conn: func(b Backends) grpc.ClientConnInterface { return b.Analytics },
		register: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
			return analyticsv1.RegisterAnalyticsServiceHandlerClient(ctx, mux, analyticsv1.NewAnalyticsServiceClient(cc))
		},
	},
}

// New builds the edge handler: a grpc-gateway ServeMux with every HTTP-bound service registered over
// the given connections, wrapped in the edge middleware. log receives the access log and the real
// causes of 500 answers.
func New(ctx context.Context, b Backends, log *slog.Logger, opts ...Option) (http.Handler, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if log == nil {
		return nil, fmt.Errorf("edge: a logger is required")
	}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithForwardResponseRewriter(rewriteSuccess),
		runtime.WithForwardResponseOption(successStatus),
		runtime.WithErrorHandler(errorHandler(log)),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithMetadata(requestIDMetadata),
		runtime.WithOutgoingHeaderMatcher(dropHeader),
		runtime.WithOutgoingTrailerMatcher(dropHeader),
		// Neither X-HTTP-Method-Override nor a form-encoded POST may turn a request into another
		// method: the method a client sends is the route it gets.
		runtime.WithDisableHTTPMethodOverride(),
		runtime.WithDisablePathLengthFallback(),
	)
	for _, be := range backends {
		cc := be.conn(b)
		if cc == nil {
			return nil, fmt.Errorf("edge: no connection for the %s backend", be.name)
		}
		if err := be.register(ctx, mux, cc); err != nil {
			return nil, fmt.Errorf("edge: register %s: %w", be.name, err)
		}
	}
	if err := mux.HandlePath(http.MethodGet, healthPath, serveHealth); err != nil {
		return nil, fmt.Errorf("edge: register %s: %w", healthPath, err)
	}
	// The hosted login page talks to identity's LoginService, which is service_only: b.Identity
	// must carry the service token.
	page := login.New(identityv1.NewLoginServiceClient(b.Identity), log, o.trustedProxies)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		if err := mux.HandlePath(method, login.Path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			page.ServeHTTP(w, r)
		}); err != nil {
			return nil, fmt.Errorf("edge: register %s %s: %w", method, login.Path, err)
		}
	}
	return withMiddleware(mux, log), nil
}

// Option adjusts the edge.
type Option func(*options)

type options struct {
	trustedProxies []netip.Prefix
}

// WithTrustedProxies names the reverse proxies in front of the edge, whose X-Forwarded-For the
// hosted login page may believe when it takes the end user's address for its attempt limits.
func WithTrustedProxies(p []netip.Prefix) Option {
	return func(o *options) { o.trustedProxies = p }
}

// healthPath answers liveness probes. It is not part of the contract and touches no backend, so a
// slow service never gets the edge restarted.
const healthPath = "/healthz"

func serveHealth(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{Status: "ok"})
}
