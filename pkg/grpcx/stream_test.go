package grpcx

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// No Berth RPC streams yet, so the tests register streaming methods by hand. updateUser borrows the
// route option of IdentityService/UpdateUser (API key or the user's own access token, scoped by
// userId); unrouted has no option at all.
const (
	updateUser = "/berth.identity.v1.IdentityService/UpdateUser"
	unrouted   = "/berth.test.v1.Streamer/Echo"
)

// echoPrincipal answers every received UpdateUserRequest with the user id of the admitted caller,
// proving the handler ran and saw the Principal.
func echoPrincipal(_ any, ss grpc.ServerStream) error {
	for {
		var in identityv1.UpdateUserRequest
		if err := ss.RecvMsg(&in); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		p, _ := authn.FromContext(ss.Context())
		if err := ss.SendMsg(&identityv1.UpdateUserRequest{UserId: p.UserID}); err != nil {
			return err
		}
	}
}

func streamService(name, method string) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: name,
		HandlerType: (*any)(nil),
		Streams:     []grpc.StreamDesc{{StreamName: method, Handler: echoPrincipal, ServerStreams: true, ClientStreams: true}},
	}
}

type userTokens struct{}

func (userTokens) VerifyAccessToken(_ context.Context, raw string) (authn.Principal, error) {
	if raw == "token-u1" {
		return authn.Principal{AppID: "app-1", UserID: "user-1"}, nil
	}
	return authn.Principal{}, fault.Unauthenticated("invalid access token")
}

func streamServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	s, err := NewServer(ServerOptions{Log: slog.New(slog.DiscardHandler), Policy: authn.Policy{Tokens: userTokens{}}})
	if err != nil {
		t.Fatal(err)
	}
	s.RegisterService(streamService("berth.identity.v1.IdentityService", "UpdateUser"), struct{}{})
	s.RegisterService(streamService("berth.test.v1.Streamer", "Echo"), struct{}{})
	return grpctest.Serve(t, s)
}

// exchange opens a stream on method, sends one request for userID and returns the echoed user id.
func exchange(ctx context.Context, conn *grpc.ClientConn, method, userID string) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return "", err
	}
	if err := cs.SendMsg(&identityv1.UpdateUserRequest{UserId: userID}); err != nil && err != io.EOF {
		return "", err
	}
	var out identityv1.UpdateUserRequest
	if err := cs.RecvMsg(&out); err != nil {
		return "", err
	}
	return out.GetUserId(), nil
}

func TestStreamPolicyEnforcesTheRouteOption(t *testing.T) {
	conn := streamServer(t)
	bearer := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), authn.MDAuthorization, "Bearer "+token)
	}
	tests := []struct {
		name   string
		ctx    context.Context
		method string
		userID string
		want   codes.Code
	}{
		{"method without route option is denied", bearer("token-u1"), unrouted, "user-1", codes.PermissionDenied},
		{"no credentials", context.Background(), updateUser, "user-1", codes.Unauthenticated},
		{"invalid token", bearer("forged"), updateUser, "user-1", codes.Unauthenticated},
		{"token of another user than the message names", bearer("token-u1"), updateUser, "user-2", codes.PermissionDenied},
		{"own user", bearer("token-u1"), updateUser, "user-1", codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := exchange(tt.ctx, conn, tt.method, tt.userID)
			if status.Code(err) != tt.want {
				t.Fatalf("code = %v (%v), want %v", status.Code(err), err, tt.want)
			}
			if tt.want == codes.OK && got != "user-1" {
				t.Fatalf("handler saw principal user %q, want user-1", got)
			}
		})
	}
}

func TestHealthWatchStreamsWithoutCredentials(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := healthpb.NewHealthClient(streamServer(t)).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Recv()
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch = %v, %v", res, err)
	}
}

func TestDialResolvesSchemelessTargetsThroughDNSAndListsAsReplicas(t *testing.T) {
	for target, want := range map[string]string{
		"tenant:9090":             "dns:///tenant:9090",
		"127.0.0.1:9090":          "dns:///127.0.0.1:9090",
		"[::1]:9090":              "dns:///[::1]:9090",
		"dns:///identity:9090":    "dns:///identity:9090",
		"passthrough:///bufnet":   "passthrough:///bufnet",
		"unix:///run/b.sock":      "unix:///run/b.sock",
		"127.0.0.1:1,127.0.0.1:2": "list:///127.0.0.1:1,127.0.0.1:2",
		"a:1,b:2,c:3":             "list:///a:1,b:2,c:3",
	} {
		if got := resolvedTarget(target); got != want {
			t.Errorf("resolvedTarget(%q) = %q, want %q", target, got, want)
		}
	}
}

// NewClient refuses a default service config it cannot parse, so this also proves the round-robin
// configuration is accepted.
func TestDialAcceptsTheBalancingConfigAndUsesDNS(t *testing.T) {
	conn, err := Dial("tenant.invalid:9090", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.CanonicalTarget() != "dns:///tenant.invalid:9090" {
		t.Errorf("target = %q", conn.CanonicalTarget())
	}
}
