package grpctest

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// bufferSize is the in-memory pipe's buffer per connection; 1 MiB holds any message tests send.
const bufferSize = 1 << 20

// Serve serves srv on an in-memory listener (bufconn) and returns a client connection to it, made
// with opts followed by the listener's dialer and insecure transport credentials. The connection
// is closed, then srv stopped, when the test ends.
//
// The target uses the passthrough resolver: grpc.NewClient resolves through DNS by default, and the
// address is a placeholder the dialer ignores.
func Serve(t testing.TB, srv *grpc.Server, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(bufferSize)
	go func() { _ = srv.Serve(lis) }() // returns once srv is stopped
	t.Cleanup(srv.Stop)
	opts = append(opts,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
	if err != nil {
		t.Fatalf("grpctest: dial in-memory server: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
