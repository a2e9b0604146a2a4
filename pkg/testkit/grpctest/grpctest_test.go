package grpctest_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	"github.com/berthhq/berth/pkg/testkit/grpctest"
)

func TestServeReachesTheServerWithTheCallersDialOptions(t *testing.T) {
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if md, _ := metadata.FromIncomingContext(ctx); len(md.Get("x-test")) != 1 {
			t.Errorf("the caller's dial option did not add its metadata: %v", md)
		}
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	addHeader := grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, "x-test", "1"), method, req, reply, cc, opts...)
	})
	conn := grpctest.Serve(t, srv, addHeader)
	res, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v, %v; want SERVING", res, err)
	}
}

func TestServeStopsTheServerWhenTheTestEnds(t *testing.T) {
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	t.Run("serve", func(t *testing.T) { grpctest.Serve(t, srv) })
	// A stopped server refuses to serve again; a running one would block here.
	if err := srv.Serve(bufconn.Listen(1)); err != grpc.ErrServerStopped {
		t.Fatalf("Serve after the test = %v, want %v", err, grpc.ErrServerStopped)
	}
}
