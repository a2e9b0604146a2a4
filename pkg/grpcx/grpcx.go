package grpcx

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/tracing"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/status"
)

// DefaultTimeout bounds calls that arrive without a deadline, so a stuck store cannot pin a
// goroutine forever.
const DefaultTimeout = 30 * time.Second

// ServerOptions configures NewServer.
type ServerOptions struct {
	Log    *slog.Logger
	Policy authn.Policy
	// Health is the gRPC health service to register; nil registers one that always says SERVING.
	// A module's process passes its own and keeps it in step with its readiness.
	Health *health.Server
	// TLS serves over TLS when set (it must hold a certificate); nil serves plaintext.
	TLS *TLS
	// Local, when set, gets the server's unary chain and the health service, so that callers in
	// the process can reach the server's methods without the network (Local.Conn). Services
	// register on it and on the server alike (a module's Process does both).
	Local *Local
}

// streamWorkers is how many calls a server runs at once on workers whose grown stacks they reuse:
// about as many as a busy service has in flight (its database pool and the callers' waits), at
// a few KiB of stack each while idle.
const streamWorkers = 64

// NewServer returns a gRPC server with the standard chains and the health service registered.
// The order matters: the request id comes first so every later log line carries it; the metrics
// and the access log sit outside the fault mapping so they record the code the caller received;
// the mapping sits outside the policy so the policy's faults become statuses like any handler's.
// The text rule runs inside the mapping and before the policy: bad bytes are a 400 whoever sends
// them, exactly as at the REST edge, and never reach a credential check or a store.
func NewServer(o ServerOptions) (*grpc.Server, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	creds, err := o.TLS.serverCredentials()
	if err != nil {
		return nil, err
	}
	unary := chainUnary(
		requestID,
		recovery(log),
		metrics,
		accessLog(log),
		Faults(log),
		deadline,
		checkText,
		o.Policy.UnaryInterceptor(),
	)
	opts := []grpc.ServerOption{grpc.Creds(creds), grpc.UnaryInterceptor(unary),
		// Calls run on long-lived workers instead of a new goroutine each (one is started when all
		// are busy, so nothing queues). A fresh goroutine's stack grew through the interceptors and
		// pgx on every call: about a fifth of a busy service's CPU (docs/performance.md). The option
		// is marked experimental in grpc-go; a release that drops it fails the build, not a call.
		grpc.NumStreamWorkers(streamWorkers)}
	if tracing.On() {
		// The span continues the caller's trace from the call's metadata.
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler()))
	}
	s := grpc.NewServer(append(opts,
		grpc.ChainStreamInterceptor(
			streamRequestID,
			streamRecovery(log),
			streamMetrics,
			streamAccessLog(log),
			StreamFaults(log),
			streamCheckText,
			o.Policy.StreamInterceptor(),
		),
	)...)
	hs := o.Health
	if hs == nil {
		hs = health.NewServer()
	}
	healthpb.RegisterHealthServer(s, hs)
	if o.Local != nil {
		o.Local.setChain(unary)
		healthpb.RegisterHealthServer(o.Local, hs)
	}
	return s, nil
}

func withRequestID(ctx context.Context) context.Context {
	id := ""
	// One key, read without copying the call's metadata (FromIncomingContext copies it all).
	if v := metadata.ValueFromIncomingContext(ctx, reqid.MetadataKey); len(v) > 0 {
		id = v[0]
	}
	return reqid.With(ctx, reqid.Accept(id))
}

func requestID(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return h(withRequestID(ctx), req)
}

func streamRequestID(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &contextStream{ServerStream: ss, ctx: withRequestID(ss.Context())})
}

// contextStream is a ServerStream whose handler sees ctx: how a stream interceptor hands values
// (request id, Principal) to the handler.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }

// recovered turns a handler panic into a generic Internal status; the panic and its stack are
// logged here, so the fault mapping passes the status on without logging it again.
func recovered(ctx context.Context, log *slog.Logger, method string, p any) error {
	log.ErrorContext(ctx, "panic in handler", "method", method, "panic", p, "stack", string(debug.Stack()))
	return internalStatus().Err()
}

func recovery(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				resp, err = nil, recovered(ctx, log, info.FullMethod, p)
			}
		}()
		return h(ctx, req)
	}
}

func streamRecovery(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = recovered(ss.Context(), log, info.FullMethod, p)
			}
		}()
		return h(srv, ss)
	}
}

// logAccess writes the one line per call. Causes are not repeated here: the fault mapping logged
// any the caller was not shown. A caller that hung up is routine, so Canceled is only a debug line.
func logAccess(ctx context.Context, log *slog.Logger, method string, start time.Time, err error) {
	code := status.Code(err)
	level := slog.LevelInfo
	if code == codes.Canceled || hop(ctx) || setup(ctx) {
		level = slog.LevelDebug
	}
	if !log.Enabled(ctx, level) {
		return
	}
	log.LogAttrs(ctx, level, "grpc", slog.String("method", method), slog.String("code", code.String()),
		logx.Duration(time.Since(start)))
}

// hop reports whether the call is a step of a request that was logged where it entered Berth: one
// the REST edge forwarded (grpc-gateway always sends x-forwarded-host) or one a Berth service made
// with the service token. Those are logged at debug, so each request makes one info line: the
// edge's for REST, this one for direct gRPC callers. The markers only choose a log level.
func hop(ctx context.Context) bool {
	return len(metadata.ValueFromIncomingContext(ctx, "x-forwarded-host")) > 0 ||
		len(metadata.ValueFromIncomingContext(ctx, authn.MDServiceToken)) > 0
}

// MDSetup marks the calls a process makes to provision itself as it starts (the all-in-one's demo
// seed): SetupInterceptor sends it, and their access lines are debug lines, so a start-up is not
// two dozen lines of its own provisioning. Like the hop markers it only chooses a log level.
const MDSetup = "x-berth-setup"

// SetupInterceptor marks every call of a client connection as start-up provisioning (MDSetup).
func SetupInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, MDSetup, "1"), method, req, reply, cc, opts...)
	}
}

func setup(ctx context.Context) bool {
	return len(metadata.ValueFromIncomingContext(ctx, MDSetup)) > 0
}

func accessLog(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		logAccess(ctx, log, info.FullMethod, start, err)
		return resp, err
	}
}

func streamAccessLog(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		start := time.Now()
		err := h(srv, ss)
		logAccess(ss.Context(), log, info.FullMethod, start, err)
		return err
	}
}

func deadline(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	return h(ctx, req)
}

// roundRobin spreads calls over every address the resolver returns. gRPC's default (pick_first)
// would send all of a process's calls to one replica for the connection's lifetime.
const roundRobin = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// Dial opens a client connection inside the deployment, over TLS when t is set. It forwards the
// request id and, when serviceToken is set, authenticates as a Berth service. A target without a
// scheme ("tenant:9090") is resolved through DNS, so every replica behind the name gets calls; a
// scheme-less list ("10.0.0.1:9101,10.0.0.2:9101") names the replicas themselves (ListScheme);
// targets with a scheme (passthrough:///, unix:) are used as given.
func Dial(target, serviceToken string, t *TLS) (*grpc.ClientConn, error) {
	target = resolvedTarget(target)
	if rest, ok := strings.CutPrefix(target, ListScheme+":///"); ok {
		if _, err := parseList(rest); err != nil {
			return nil, err
		}
	}
	opts := append(ClientOptions(serviceToken, t), grpc.WithDefaultServiceConfig(roundRobin))
	return grpc.NewClient(target, opts...)
}

// CheckTarget is the rule of an address setting Dial takes: host:port (resolved through DNS), a
// comma-separated list of host:port (the replicas themselves), or a target with a scheme gRPC
// resolves (dns:///name:port, unix:path).
func CheckTarget(target string) error {
	resolved := resolvedTarget(target)
	if rest, ok := strings.CutPrefix(resolved, ListScheme+":///"); ok {
		if _, err := parseList(rest); err != nil {
			return errors.New("must be host:port, or several separated by commas")
		}
		return nil
	}
	if rest, ok := strings.CutPrefix(resolved, "dns:///"); ok && resolved != target {
		if _, port, err := net.SplitHostPort(rest); err != nil || port == "" {
			return errors.New("must be host:port, or several separated by commas, or a gRPC target with a scheme")
		}
	}
	return nil
}

// resolvedTarget prefixes dns:/// (or list:/// for a comma-separated list) unless target starts
// with a scheme a resolver is registered for — the same test grpc.NewClient applies, so
// "host:port" (which parses as scheme "host") still counts as scheme-less.
func resolvedTarget(target string) string {
	if scheme, _, ok := strings.Cut(target, ":"); ok && resolver.Get(scheme) != nil {
		return target
	}
	if strings.Contains(target, ",") {
		return ListScheme + ":///" + target
	}
	return "dns:///" + target
}

// ClientOptions are Dial's options, for connections made elsewhere (in-process test servers,
// admin clients). A connection that carries the service token presents the process's certificate
// under TLS; t nil is plaintext.
func ClientOptions(serviceToken string, t *TLS) []grpc.DialOption {
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(t.clientCredentials(serviceToken != "")),
		grpc.WithChainUnaryInterceptor(callInterceptors(serviceToken)...),
	}
	if tracing.On() {
		// Calls carry the caller's trace context in their metadata.
		opts = append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	}
	return opts
}

func forwardRequestID(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	// A caller that put the id in the call's metadata itself (the edge does, for connections that
	// are not Berth's) is not sent a second copy: the service gets exactly one.
	if id := reqid.From(ctx); id != "" && len(metadata.ValueFromOutgoingContext(ctx, reqid.MetadataKey)) == 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, reqid.MetadataKey, id)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// callInterceptors are what every call of a Berth connection passes: the request id, and with the
// service token (Berth calling Berth) the token and the actor the caller acts for, so the called
// service audits the change under it.
func callInterceptors(serviceToken string) []grpc.UnaryClientInterceptor {
	if serviceToken == "" {
		return []grpc.UnaryClientInterceptor{forwardRequestID}
	}
	return []grpc.UnaryClientInterceptor{forwardRequestID, ServiceTokenInterceptor(serviceToken), forwardActor}
}

func forwardActor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(authn.ForwardActor(ctx), method, req, reply, cc, opts...)
}

// ServiceTokenInterceptor sends the service token on every call ("" sends nothing).
func ServiceTokenInterceptor(serviceToken string) grpc.UnaryClientInterceptor {
	return MetadataInterceptor(authn.MDServiceToken, serviceToken)
}

// AdminTokenInterceptor sends the admin token (provisioning clients: berthctl, the demo seed).
func AdminTokenInterceptor(adminToken string) grpc.UnaryClientInterceptor {
	return MetadataInterceptor(authn.MDAdminToken, adminToken)
}

// MetadataInterceptor adds key: value to every outgoing call; an empty value adds nothing.
func MetadataInterceptor(key, value string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if value != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, key, value)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
