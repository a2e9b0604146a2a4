package edge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/gateway/account"
	"github.com/berthhq/berth/gateway/apidocs"
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/emailchange"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/pay"
	"github.com/berthhq/berth/gateway/recovery"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/proto/openapi"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	"github.com/berthhq/berth/proto/registry"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// backend is one module's HTTP routes. Registration goes through generated clients over real
// connections (never Register...HandlerServer), so every call passes the services' interceptors
// exactly as a direct gRPC caller's would.
type backend struct {
	module   string             // the module's name (module.Module.Name): its connection in New's map
	services []registry.Service // its HTTP-bound gRPC services the generated handlers serve
	// raw mounts routes the edge serves by hand over the module's connection (the webhooks),
	// which the route resolver does not need.
	raw []mount
}

// mount serves a service's routes by hand on the edge's paths over the module's connection.
type mount func(pathHandler, grpc.ClientConnInterface, *slog.Logger) error

// backends is the edge's routing table, derived from proto/registry: one row per context with
// HTTP-bound services, in the registry's order, each service served through its generated
// registration unless it is one of the two exceptions below. Adding a context with REST routes
// adds nothing here.
var backends = backendsOf(registry.Contexts)

// servedByHand are the HTTP-bound services whose routes the edge mounts itself instead of through
// the generated handlers: the webhook ingest's routes 3 and 4 take the provider's raw bytes, which
// a generated handler would decode and re-encode (webhooks.go).
var servedByHand = map[string]mount{
	webhookv1.WebhookIngestService_ServiceDesc.ServiceName: mountWebhooks,
}

// ownClients are the HTTP-bound services whose generated handlers the edge gives a client of its
// own: analytics', whose streamed lists are primed before the first chunk is written (streams.go).
var ownClients = map[string]func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error{
	analyticsv1.AnalyticsService_ServiceDesc.ServiceName: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
		return analyticsv1.RegisterAnalyticsServiceHandlerClient(ctx, mux, primedAnalytics{analyticsv1.NewAnalyticsServiceClient(cc)})
	},
}

// backendsOf makes the routing table of contexts: a context without HTTP-bound services has no row.
func backendsOf(contexts []registry.Context) []backend {
	var table []backend
	for _, c := range contexts {
		be := backend{module: c.Name}
		for _, svc := range c.HTTP {
			if m, ok := servedByHand[svc.Name]; ok {
				be.raw = append(be.raw, m)
				continue
			}
			if register, ok := ownClients[svc.Name]; ok {
				svc.Register = register
			}
			be.services = append(be.services, svc)
		}
		if len(be.services) > 0 || len(be.raw) > 0 {
			table = append(table, be)
		}
	}
	return table
}

// OpenAPIPath serves the OpenAPI document of the REST surface; apidocs.Path serves the reference
// rendered from it.
const OpenAPIPath = "/openapi.json"

// apiReference is the page of apidocs.Path. The document is embedded, so the page is the same for
// every edge the process builds (tests build many): it is rendered once.
var apiReference = sync.OnceValues(func() (*apidocs.Page, error) {
	return apidocs.Render(openapi.Document, OpenAPIPath)
})

// LoginModule is the module behind the hosted login page (identity's LoginService).
const LoginModule = "identity"

// PaymentModule is the module behind the hosted payment pages (billing's PaymentPageService).
const PaymentModule = "billing"

// Modules lists the modules the edge forwards to, in the routing table's order (proto/registry's).
func Modules() []string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = b.module
	}
	return names
}

// New builds the edge handler: a grpc-gateway ServeMux with every HTTP-bound service registered over
// conns, the connection to each module of Modules by name, wrapped in the edge middleware. These
// connections must not carry the service token: the edge forwards its callers' credentials and
// nothing else. The hosted login page needs WithLogin, the payment pages WithPayment. log receives the access log and the real
// causes of 500 answers.
func New(ctx context.Context, conns map[string]grpc.ClientConnInterface, log *slog.Logger, opts ...Option) (http.Handler, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if log == nil {
		return nil, fmt.Errorf("edge: a logger is required")
	}
	// Every connection counts its calls under its backend's name (countedConn).
	if o.login != nil {
		o.login = countedConn{o.login, LoginModule}
	}
	if o.payment != nil {
		o.payment = countedConn{o.payment, PaymentModule}
	}
	d := newDispatcher(func() *runtime.ServeMux { return newMux(log) })
	for _, be := range backends {
		if conns[be.module] == nil {
			return nil, fmt.Errorf("edge: no connection to the %s module", be.module)
		}
		cc := countedConn{conns[be.module], be.module}
		// Every forwarded call passes the text rule before it is marshalled (input.go).
		for _, svc := range be.services {
			if err := d.register(ctx, svc, checkedConn{cc}); err != nil {
				return nil, fmt.Errorf("edge: register %s: %w", be.module, err)
			}
		}
		// Raw routes carry a provider's bytes, which the text rule must not judge.
		for _, m := range be.raw {
			if err := m(d, cc, log); err != nil {
				return nil, fmt.Errorf("edge: mount %s: %w", be.module, err)
			}
		}
	}
	if o.login == nil {
		return nil, fmt.Errorf("edge: the login page needs a connection to %s (WithLogin)", LoginModule)
	}
	loginClient := identityv1.NewLoginServiceClient(checkedConn{o.login})
	loginPage := login.New(loginClient, log, o.trustedProxies)
	for path, page := range map[string]http.Handler{
		login.Path:                 loginPage,
		login.VerifyPath:           loginPage,
		login.ProviderPath:         loginPage,
		login.ProviderCallbackPath: loginPage,
		login.ProviderLinkPath:     loginPage,
		login.SecondFactorPath:     loginPage,
		login.PasskeyPath:          loginPage,
		emailchange.Path:           emailchange.New(loginClient, log),
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			if err := d.HandlePath(method, path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
				page.ServeHTTP(w, r)
			}); err != nil {
				return nil, fmt.Errorf("edge: register %s %s: %w", method, path, err)
			}
		}
	}
	// The password-reset pages, which the sign-in page links to and reset mails link back to.
	reset := recovery.New(identityv1.NewLoginServiceClient(checkedConn{o.login}), log, o.trustedProxies)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		if err := d.HandlePath(method, recovery.Path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			reset.ServeHTTP(w, r)
		}); err != nil {
			return nil, fmt.Errorf("edge: register %s %s: %w", method, recovery.Path, err)
		}
	}
	// The account page's describe and password change are LoginService calls (the service
	// token's connection); its code exchange and its calls with the user's own token go over the
	// forwarding connection, which carries nothing but what the page puts in.
	forward := checkedConn{countedConn{conns[LoginModule], LoginModule}}
	acct := account.New(identityv1.NewLoginServiceClient(checkedConn{o.login}), identityv1.NewTokenServiceClient(forward),
		identityv1.NewIdentityServiceClient(forward), log, o.trustedProxies)
	for _, route := range []struct{ method, path string }{
		{http.MethodGet, account.Path}, {http.MethodPost, account.Path}, {http.MethodGet, account.CallbackPath},
	} {
		if err := d.HandlePath(route.method, route.path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			acct.ServeHTTP(w, r)
		}); err != nil {
			return nil, fmt.Errorf("edge: register %s %s: %w", route.method, route.path, err)
		}
	}
	if o.consoleKey != nil {
		if err := mountConsole(d, o, conns, log); err != nil {
			return nil, err
		}
	}
	if o.payment == nil {
		return nil, fmt.Errorf("edge: the payment pages need a connection to %s (WithPayment)", PaymentModule)
	}
	pages := pay.New(billingv1.NewPaymentPageServiceClient(checkedConn{o.payment}), loginClient, log)
	for path, serve := range map[string]http.HandlerFunc{pay.Path: pages.Open, pay.ReturnPath: pages.Return} {
		if err := d.HandlePath(http.MethodGet, path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			serve(w, r)
		}); err != nil {
			return nil, fmt.Errorf("edge: register GET %s: %w", path, err)
		}
	}
	// The document of this surface, generated from the same protos (proto/openapi).
	if err := d.HandlePath(http.MethodGet, OpenAPIPath, func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapi.Document)
	}); err != nil {
		return nil, fmt.Errorf("edge: register GET %s: %w", OpenAPIPath, err)
	}
	// The reference people read in a browser, rendered from that same document.
	docs, err := apiReference()
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		if err := d.HandlePath(method, apidocs.Path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			docs.ServeHTTP(w, r)
		}); err != nil {
			return nil, fmt.Errorf("edge: register %s %s: %w", method, apidocs.Path, err)
		}
	}
	res, err := newResolver(ctx)
	if err != nil {
		return nil, fmt.Errorf("edge: route resolver: %w", err)
	}
	// Identity's internal service is service-only, so the listing goes over the login page's
	// connection, which carries the service token.
	origins := newAnyAppOrigins(identityv1.NewIdentityInternalServiceClient(o.login))
	return withMiddleware(withClientAddress(o.trustedProxies, withCORS(res, guardStreams(log, d))), log, origins), nil
}

// newMux is the grpc-gateway mux every route of the edge is served by, with the edge's envelopes,
// error handling and header rules.
func newMux(log *slog.Logger) *runtime.ServeMux {
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithForwardResponseRewriter(rewriteSuccess),
		runtime.WithForwardResponseOption(successStatus),
		runtime.WithErrorHandler(errorHandler(log)),
		runtime.WithStreamErrorHandler(streamFailed),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(dropHeader),
		runtime.WithOutgoingTrailerMatcher(dropHeader),
		// Neither X-HTTP-Method-Override nor a form-encoded POST may turn a request into another
		// method: the method a client sends is the route it gets.
		runtime.WithDisableHTTPMethodOverride(),
		runtime.WithDisablePathLengthFallback(),
	)
}

// Option adjusts the edge.
type Option func(*options)

type options struct {
	trustedProxies []netip.Prefix
	login          grpc.ClientConnInterface
	payment        grpc.ClientConnInterface
	consoleKey     []byte
}

// WithPayment is the connection of the hosted payment pages to billing's PaymentPageService,
// which, like the login service, is service-only: this connection carries the service token.
func WithPayment(conn grpc.ClientConnInterface) Option {
	return func(o *options) { o.payment = conn }
}

// WithLogin is the connection of the hosted login page to identity's LoginService. That service is
// service-only, so this connection, unlike the forwarding ones, carries the service token; the
// page sends only what its form validated.
func WithLogin(conn grpc.ClientConnInterface) Option {
	return func(o *options) { o.login = conn }
}

// WithTrustedProxies names the reverse proxies in front of the edge, whose X-Forwarded-For the
// hosted login page may believe when it takes the end user's address for its attempt limits.
func WithTrustedProxies(p []netip.Prefix) Option {
	return func(o *options) { o.trustedProxies = p }
}

// WithConsole serves the web console (gateway/console) at console.Path, its session cookies
// sealed with key (console.KeySize bytes; every edge of a deployment needs the same). Without it
// the edge serves no console.
func WithConsole(key []byte) Option {
	return func(o *options) { o.consoleKey = key }
}

// mountConsole registers the console's routes. Its steps before a sign-in go over the login
// page's connection (the service token); everything else over the forwarding connection of the
// module the call belongs to, which carries only the member's operator token the console adds.
func mountConsole(d *dispatcher, o options, conns map[string]grpc.ClientConnInterface, log *slog.Logger) error {
	forward := func(module string) grpc.ClientConnInterface {
		return checkedConn{countedConn{conns[module], module}}
	}
	identity := forward(LoginModule)
	c, err := console.New(console.Backends{
		Service:  identityv1.NewMemberServiceClient(checkedConn{o.login}),
		Members:  identityv1.NewMemberServiceClient(identity),
		Admin:    identityv1.NewIdentityAdminServiceClient(identity),
		Operator: identityv1.NewOperatorServiceClient(identity),
		Users:    identityv1.NewUserAdminServiceClient(identity),
		Identity: identityv1.NewIdentityServiceClient(identity),
		Tenants:  tenantv1.NewTenantAdminServiceClient(forward("tenant")),
		Tenant:   tenantv1.NewTenantServiceClient(forward("tenant")),
		Billing:  billingv1.NewBillingAdminServiceClient(forward("billing")),
		// The analytics page's series, whose route admits the member's operator token for their
		// own project's apps.
		Analytics: analyticsv1.NewAnalyticsSeriesServiceClient(forward("analytics")),
		Outbound:  outboundv1.NewOutboundServiceClient(forward("outbound")),
		Webhooks:  webhookv1.NewWebhookAdminServiceClient(forward("webhook")),
		// The audit page: the log's list and its retention admit a member of the app's project.
		Audit:          analyticsv1.NewAnalyticsServiceClient(forward("analytics")),
		AuditRetention: analyticsv1.NewAnalyticsAdminServiceClient(forward("analytics")),
	}, o.consoleKey, log, o.trustedProxies)
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	for _, route := range c.Routes() {
		if err := d.HandlePath(route.Method, route.Path, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
			c.ServeHTTP(w, r)
		}); err != nil {
			return fmt.Errorf("edge: register %s %s: %w", route.Method, route.Path, err)
		}
	}
	return nil
}
