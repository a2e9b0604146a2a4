package grpcx

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/tracing"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// seen is what the unary test handler observed of its call.
type seen struct {
	requestID   string
	outgoing    int // outgoing metadata keys the handler's context carries
	gatewayHost string
	callerValue bool // the caller's context value reached the handler
	traceID     string
}

// tracer records spans for this package's tests; set once, as the global provider delegates once.
var tracer = sync.OnceValue(func() trace.Tracer {
	tracing.Use(sdktrace.NewTracerProvider())
	return otel.Tracer("grpcx-test")
})

// callerKey marks a value of the caller's context (as an open transaction would be).
type callerKey struct{}

// unaryService borrows IdentityService/UpdateUser's route option. Its handler answers with the
// admitted user's id, sets a header and a trailer, scribbles on its request (a copy, if the
// transport is right).
func unaryService(got *seen) *grpc.ServiceDesc {
	handle := func(ctx context.Context, in *identityv1.UpdateUserRequest) (*identityv1.UpdateUserRequest, error) {
		got.requestID = reqid.From(ctx)
		got.callerValue = ctx.Value(callerKey{}) != nil
		got.traceID = trace.SpanContextFromContext(ctx).TraceID().String()
		md, _ := metadata.FromOutgoingContext(ctx)
		got.outgoing = md.Len()
		in2, _ := metadata.FromIncomingContext(ctx)
		if v := in2.Get("x-forwarded-host"); len(v) > 0 {
			got.gatewayHost = v[0]
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-header", "h"))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "t"))
		in.UserId = "scribbled"
		p, _ := authn.FromContext(ctx)
		return &identityv1.UpdateUserRequest{UserId: p.UserID}, nil
	}
	return &grpc.ServiceDesc{
		ServiceName: "berth.identity.v1.IdentityService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "UpdateUser", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(identityv1.UpdateUserRequest)
			if err := dec(in); err != nil {
				return nil, err
			}
			h := func(ctx context.Context, req any) (any, error) {
				return handle(ctx, req.(*identityv1.UpdateUserRequest))
			}
			return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: updateUser}, h)
		}}},
	}
}

// TestAnInProcessCallAnswersWhatTheNetworkAnswers runs the same calls over the network and through
// a Local and requires the same answer, status, header and trailer, the same interceptors (policy,
// fault mapping, request id), the caller's trace continued, and a request the caller still holds
// unchanged.
func TestAnInProcessCallAnswersWhatTheNetworkAnswers(t *testing.T) {
	tracer()
	var got seen
	local := NewLocal()
	s, err := NewServer(ServerOptions{Log: slog.New(slog.DiscardHandler), Policy: authn.Policy{Tokens: userTokens{}}, Local: local})
	if err != nil {
		t.Fatal(err)
	}
	desc := unaryService(&got)
	s.RegisterService(desc, struct{}{})
	local.RegisterService(desc, struct{}{})
	s.RegisterService(streamService("berth.test.v1.Streamer", "Echo"), struct{}{})
	network := grpctest.Serve(t, s, ClientOptions("", nil)...)
	conns := map[string]grpc.ClientConnInterface{"network": network, "in process": local.Conn(network, "")}

	bearer := func(token string) context.Context {
		ctx, span := tracer().Start(context.Background(), "caller")
		span.End()
		ctx = context.WithValue(reqid.With(ctx, "req-123"), callerKey{}, "tx")
		return metadata.AppendToOutgoingContext(ctx, authn.MDAuthorization, "Bearer "+token, "x-forwarded-host", "edge.example")
	}
	cases := []struct {
		name   string
		ctx    context.Context
		userID string
		want   codes.Code
	}{
		{"no credentials", context.Background(), "user-1", codes.Unauthenticated},
		{"another user's id", bearer("token-u1"), "user-2", codes.PermissionDenied},
		{"own user", bearer("token-u1"), "user-1", codes.OK},
	}
	type answer struct {
		code             codes.Code
		msg              string
		reply            string
		header, trailer  []string
		requestID, host  string
		traceID          string
		outgoing         int
		callerValue      bool
		requestUnchanged bool
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]answer{}
			for name, conn := range conns {
				got = seen{}
				req := &identityv1.UpdateUserRequest{UserId: c.userID}
				var reply identityv1.UpdateUserRequest
				var header, trailer metadata.MD
				err := conn.Invoke(c.ctx, updateUser, req, &reply, grpc.Header(&header), grpc.Trailer(&trailer))
				st, _ := status.FromError(err)
				answers[name] = answer{code: st.Code(), msg: st.Message(), reply: reply.GetUserId(), header: header.Get("x-header"),
					trailer: trailer.Get("x-trailer"), requestID: got.requestID, host: got.gatewayHost, outgoing: got.outgoing, callerValue: got.callerValue, traceID: got.traceID,
					requestUnchanged: req.GetUserId() == c.userID}
			}
			net, in := answers["network"], answers["in process"]
			if in.code != c.want || !reflect.DeepEqual(net, in) {
				t.Fatalf("network %+v\nin process %+v\nwant code %v", net, in, c.want)
			}
			if c.want == codes.OK && (in.reply != "user-1" || in.requestID != "req-123" || in.host != "edge.example" || in.outgoing != 0 || in.callerValue || !in.requestUnchanged ||
				in.traceID != trace.SpanContextFromContext(c.ctx).TraceID().String()) {
				t.Fatalf("in process %+v", in)
			}
		})
	}
}

func TestAnInProcessConnSendsStreamsAndUnknownMethodsOverTheNetwork(t *testing.T) {
	local := NewLocal()
	s, err := NewServer(ServerOptions{Log: slog.New(slog.DiscardHandler), Policy: authn.Policy{Tokens: userTokens{}}, Local: local})
	if err != nil {
		t.Fatal(err)
	}
	s.RegisterService(streamService("berth.identity.v1.IdentityService", "UpdateUser"), struct{}{})
	network := grpctest.Serve(t, s)
	conn := local.Conn(network, "")
	ctx := metadata.AppendToOutgoingContext(context.Background(), authn.MDAuthorization, "Bearer token-u1")
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, updateUser)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(&identityv1.UpdateUserRequest{UserId: "user-1"}); err != nil {
		t.Fatal(err)
	}
	var out identityv1.UpdateUserRequest
	if err := cs.RecvMsg(&out); err != nil || out.GetUserId() != "user-1" {
		t.Fatalf("stream through the network: %v %v", &out, err)
	}
	// The Local holds no unary UpdateUser: the network answers, and it has none either.
	err = conn.Invoke(ctx, "/berth.test.v1.Nobody/Call", &identityv1.UpdateUserRequest{}, &identityv1.UpdateUserRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("an unknown method: %v, want the network's Unimplemented", err)
	}
}

// A handler's context has no values of the caller's, yet a context derived from it the way the
// chain does (values first, then the deadline interceptor's timeout, then a store's query) must
// still end with the caller's, without a goroutine per derived context watching the caller: that
// goroutine cost every in-process call a spawn and two scheduler switches.
func TestContextsDerivedFromAnInProcessCallFollowTheCallerWithoutWatcherGoroutines(t *testing.T) {
	caller, cancel := context.WithCancel(context.WithValue(context.Background(), callerKey{}, "tx"))
	defer cancel()
	handlerCtx, release := detached(caller)
	defer release()
	if handlerCtx.Value(callerKey{}) != nil {
		t.Fatal("the handler's context carries the caller's value")
	}
	before := runtime.NumGoroutine()
	derived := make([]context.Context, 100)
	for i := range derived {
		ctx, stop := context.WithTimeout(reqid.With(handlerCtx, "r"), time.Hour)
		defer stop()
		derived[i], stop = context.WithCancel(ctx)
		defer stop()
	}
	if grew := runtime.NumGoroutine() - before; grew >= len(derived)/2 {
		t.Fatalf("deriving %d contexts started %d goroutines", len(derived), grew)
	}
	cancel()
	for i, ctx := range derived {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("derived context %d did not end with the caller's", i)
		}
	}
	if !errors.Is(context.Cause(handlerCtx), context.Canceled) {
		t.Fatalf("the handler's context ended with %v, want the caller's cause", context.Cause(handlerCtx))
	}
}

func TestAnInProcessCallKeepsTheCallersDeadline(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	caller, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	ctx, release := detached(caller)
	if got, ok := ctx.Deadline(); !ok || !got.Equal(deadline) {
		t.Fatalf("deadline = %v, %v; want the caller's %v", got, ok, deadline)
	}
	release()
	if ctx.Err() == nil {
		t.Fatal("the handler's context outlived its call")
	}
	if caller.Err() != nil {
		t.Fatal("ending the call ended the caller's context")
	}
}

func TestAnInProcessCallPastTheCallersDeadlineEndsWithDeadlineExceeded(t *testing.T) {
	for range 50 {
		caller, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		ctx, release := detached(caller)
		<-ctx.Done()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("the handler's context ended with %v, want DeadlineExceeded like its caller's", ctx.Err())
		}
		release()
		cancel()
	}
}
