package grpcx

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// syncBuffer is a log destination the server's goroutines write while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A caller that hangs up while its call waits on the database is no failure of the service's,
// even though the store reports the statement PostgreSQL cancelled as an internal error: through
// the whole server chain, over the network and in process, the call is counted under Canceled,
// never Internal, and logs nothing at error.
func TestACallWhoseCallerHangsUpIsCountedAsCanceledAndNotLoggedAsAnError(t *testing.T) {
	holding := make(chan struct{}, 1)
	desc := &grpc.ServiceDesc{
		ServiceName: "berth.identity.v1.IdentityService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "UpdateUser", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(identityv1.UpdateUserRequest)
			if err := dec(in); err != nil {
				return nil, err
			}
			return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: updateUser}, func(ctx context.Context, _ any) (any, error) {
				holding <- struct{}{}
				<-ctx.Done()
				// What a store returns once PostgreSQL cancelled its statement: no context error in it.
				return nil, fault.Internal(errors.New("read user: ERROR: canceling statement due to user request (SQLSTATE 57014)"))
			})
		}}},
	}
	logs := &syncBuffer{}
	local := NewLocal()
	s, err := NewServer(ServerOptions{Log: logx.New(logs, "debug"), Policy: authn.Policy{Tokens: userTokens{}}, Local: local})
	if err != nil {
		t.Fatal(err)
	}
	s.RegisterService(desc, struct{}{})
	local.RegisterService(desc, struct{}{})
	network := grpctest.Serve(t, s, ClientOptions("", nil)...)
	for name, conn := range map[string]grpc.ClientConnInterface{"network": network, "in process": local.Conn(network, "")} {
		t.Run(name, func(t *testing.T) {
			count := func(code string) float64 { return testutil.ToFloat64(handled.WithLabelValues(updateUser, code)) }
			canceled, internal := count("Canceled"), count("Internal")
			ctx, hangUp := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(), authn.MDAuthorization, "Bearer token-u1"))
			go func() {
				<-holding
				hangUp()
			}()
			_ = conn.Invoke(ctx, updateUser, &identityv1.UpdateUserRequest{UserId: "user-1"}, new(identityv1.UpdateUserRequest))
			// The server finishes the call after the caller has gone: wait for its count.
			testkit.Eventually(t, "the call is counted", func() bool { return count("Canceled")+count("Internal") > canceled+internal })
			if got := count("Canceled") - canceled; got != 1 {
				t.Errorf("calls counted Canceled grew by %v, want 1", got)
			}
			if got := count("Internal") - internal; got != 0 {
				t.Errorf("the hang-up was counted as %v Internal calls", got)
			}
			if strings.Contains(logs.String(), `"level":"ERROR"`) {
				t.Errorf("the hang-up was logged as an error:\n%s", logs)
			}
		})
	}
}
