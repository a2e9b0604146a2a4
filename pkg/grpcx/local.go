package grpcx

import (
	"context"
	"errors"
	"net"
	"sync"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/tracing"
)

// Local holds the unary methods a process serves, so that callers in the same process (the
// all-in-one's edge and modules) reach them without the network: no HTTP/2 framing, no socket, no
// wire encoding, yet through the same server interceptor chain (request id, recovery, metrics,
// access log, fault mapping, deadline, text rule, access policy) and with the same metadata a
// network call carries. Streams are not held: a Local connection sends them over the network.
//
// A Local fills as services register (it is a grpc.ServiceRegistrar, and NewServer registers on it
// everything it registers on the gRPC server when ServerOptions.Local is set), so connections to
// it may be made before the process that serves it is built.
type Local struct {
	mu      sync.RWMutex
	chain   grpc.UnaryServerInterceptor
	methods map[string]localMethod
}

type localMethod struct {
	impl    any
	handler grpc.MethodHandler
}

// NewLocal returns an empty Local; NewServer with ServerOptions.Local gives it the server's chain.
func NewLocal() *Local { return &Local{methods: map[string]localMethod{}} }

// RegisterService records desc's unary methods as served by impl.
func (l *Local) RegisterService(desc *grpc.ServiceDesc, impl any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range desc.Methods {
		l.methods["/"+desc.ServiceName+"/"+m.MethodName] = localMethod{impl: impl, handler: m.Handler}
	}
}

func (l *Local) setChain(chain grpc.UnaryServerInterceptor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.chain = chain
}

func (l *Local) lookup(method string) (localMethod, grpc.UnaryServerInterceptor, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	m, ok := l.methods[method]
	return m, l.chain, ok && l.chain != nil
}

// Conn returns a connection that calls l's unary methods in process and sends anything else
// (streams, methods l does not hold) over network. Calls carry the service token and the caller's
// actor when serviceToken is set and forward the request id, as Dial's connections do.
func (l *Local) Conn(network grpc.ClientConnInterface, serviceToken string) grpc.ClientConnInterface {
	return &localConn{local: l, network: network,
		client: chainClient(callInterceptors(serviceToken)...)}
}

type localConn struct {
	local   *Local
	network grpc.ClientConnInterface
	client  grpc.UnaryClientInterceptor
}

func (c *localConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.network.NewStream(ctx, desc, method, opts...)
}

func (c *localConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	m, chain, ok := c.local.lookup(method)
	if !ok {
		return c.network.Invoke(ctx, method, args, reply, opts...)
	}
	return c.client(ctx, method, args, reply, nil, func(ctx context.Context, method string, args, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
		return serveLocal(ctx, m, chain, method, args, reply, opts)
	}, opts...)
}

// localPeer is the caller's address a handler sees for an in-process call.
var localPeer = &peer.Peer{Addr: &net.UnixAddr{Name: "in-process", Net: "unix"}}

// serveLocal runs one call through chain and the handler the way the gRPC server would: the
// handler's context keeps the caller's deadline and cancellation but none of its values (a
// caller's open database transaction, its principal, its outgoing metadata must not cross into
// another service), the caller's outgoing metadata becomes the handler's incoming metadata, the
// request and the answer are copies, headers and trailers the handler sets reach the caller's
// Header and Trailer options, and the caller gets a status error.
func serveLocal(ctx context.Context, m localMethod, chain grpc.UnaryServerInterceptor, method string, args, reply any, opts []grpc.CallOption) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	// FromOutgoingContext already returns a copy the callee may keep and change.
	in, _ := metadata.FromOutgoingContext(ctx)
	st := &localStream{method: method}
	span := tracing.InProcess(ctx, method)
	defer span.End()
	sctx, release := detached(ctx)
	defer release()
	if tracing.On() { // untraced, the handler's context has no span to carry
		sctx = trace.ContextWithSpan(sctx, span)
	}
	sctx = metadata.NewIncomingContext(sctx, in)
	sctx = peer.NewContext(sctx, localPeer)
	sctx = grpc.NewContextWithServerTransportStream(sctx, st)
	argMsg, ok := args.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "grpcx: in-process call %s with a request that is not a proto message", method)
	}
	dec := func(v any) error {
		dst, ok := v.(proto.Message)
		if !ok {
			return status.Errorf(codes.Internal, "grpcx: in-process call %s decodes into a non-proto message", method)
		}
		proto.Merge(dst, argMsg)
		return nil
	}
	resp, err := m.handler(m.impl, sctx, dec, chain)
	st.deliver(opts)
	if err != nil {
		return callerStatus(err)
	}
	out, ok1 := resp.(proto.Message)
	dst, ok2 := reply.(proto.Message)
	if !ok1 || !ok2 {
		return status.Errorf(codes.Internal, "grpcx: in-process call %s answered with a non-proto message", method)
	}
	proto.Reset(dst)
	proto.Merge(dst, out)
	return nil
}

// detached is a new context with the caller's deadline and cancellation and none of its values, as
// a network call's server context starts from nothing the caller's context carried. release ends
// it once the call is over.
//
// It is a context of its own rather than a wrapper hiding the caller's values: behind such a
// wrapper the context package cannot find a cancelable parent, so every context derived from the
// handler's (the deadline interceptor's, a store's query) would start a goroutine to watch the
// caller, and wake it when it ends — a spawn and two scheduler switches per call, which showed as
// most of the scheduling delay of the read path.
func detached(caller context.Context) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := context.AfterFunc(caller, func() {
		// An expired caller is left to the copy of its deadline below, which expires at the same
		// instant: canceling here could win the race and turn DeadlineExceeded into Canceled.
		if !errors.Is(caller.Err(), context.DeadlineExceeded) {
			cancel(context.Cause(caller))
		}
	})
	if deadline, ok := caller.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		ctx, cancelDeadline = context.WithDeadline(ctx, deadline)
		return ctx, func() { stop(); cancelDeadline(); cancel(context.Canceled) }
	}
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// callerStatus is what a network caller would have received for err: the status it carries, the
// context's code for a canceled or expired call, else Unknown.
func callerStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unknown, err.Error())
}

// localStream keeps the header and trailer a handler sets (grpc.SetHeader, grpc.SetTrailer).
type localStream struct {
	method          string
	header, trailer metadata.MD
}

func (s *localStream) Method() string { return s.method }
func (s *localStream) SetHeader(md metadata.MD) error {
	s.header = metadata.Join(s.header, md)
	return nil
}
func (s *localStream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }
func (s *localStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

// deliver hands the header and trailer to the call's Header and Trailer options.
func (s *localStream) deliver(opts []grpc.CallOption) {
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = s.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = s.trailer
		}
	}
}

// chainUnary makes one server interceptor of several, the first outermost, as
// grpc.ChainUnaryInterceptor does for a server.
func chainUnary(ics ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		next := h
		for i := len(ics) - 1; i >= 0; i-- {
			ic, inner := ics[i], next
			next = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, inner) }
		}
		return next(ctx, req)
	}
}

// chainClient makes one client interceptor of several, the first outermost.
func chainClient(ics ...grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		next := invoker
		for i := len(ics) - 1; i >= 0; i-- {
			ic, inner := ics[i], next
			next = func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
				return ic(ctx, method, req, reply, cc, inner, opts...)
			}
		}
		return next(ctx, method, req, reply, cc, opts...)
	}
}
