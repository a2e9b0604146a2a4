// Package grpcx builds Berth's gRPC servers and clients with the same interceptor chain everywhere:
// request id, panic recovery, access log, a default deadline and the access policy. Putting the
// policy in the server chain (not in the REST edge) is what gives direct gRPC callers the same rules.
package grpcx

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/reqid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
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
}

// NewServer returns a gRPC server with the standard chain and the health service registered.
func NewServer(o ServerOptions) *grpc.Server {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(
		requestID,
		recovery(log),
		metrics,
		accessLog(log),
		deadline,
		o.Policy.UnaryInterceptor(),
	))
	hs := o.Health
	if hs == nil {
		hs = health.NewServer()
	}
	healthpb.RegisterHealthServer(s, hs)
	return s
}

func requestID(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	id := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(reqid.MetadataKey); len(v) > 0 {
			id = v[0]
		}
	}
	return h(reqid.With(ctx, reqid.Accept(id)), req)
}

func recovery(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "panic in handler", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, "Internal Server Error")
			}
		}()
		return h(ctx, req)
	}
}

func accessLog(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		code := status.Code(err)
		level := slog.LevelInfo
		attrs := []any{"method", info.FullMethod, "code", code.String(), "duration_ms", time.Since(start).Milliseconds()}
		if code == codes.Internal || code == codes.Unknown {
			// The cause of an internal error is only ever shown here, never to the caller.
			level = slog.LevelError
			attrs = append(attrs, "error", err.Error())
		}
		log.Log(ctx, level, "grpc", attrs...)
		return resp, err
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

// Dial opens a client connection inside the deployment. It forwards the request id and, when
// serviceToken is set, authenticates as a Berth service.
func Dial(target, serviceToken string) (*grpc.ClientConn, error) {
	return grpc.NewClient(target, ClientOptions(serviceToken)...)
}

// ClientOptions are Dial's options, for connections made elsewhere (bufconn in the all-in-one run).
func ClientOptions(serviceToken string) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(forwardRequestID, ServiceTokenInterceptor(serviceToken)),
	}
}

func forwardRequestID(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if id := reqid.From(ctx); id != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, reqid.MetadataKey, id)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
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
