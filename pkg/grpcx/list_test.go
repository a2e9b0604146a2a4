package grpcx

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/pkg/testkit"
)

// replica is a plain gRPC server on a loopback port that counts the calls it answers.
type replica struct {
	addr  string
	calls atomic.Int64
	srv   *grpc.Server
}

func (r *replica) start(t *testing.T) {
	t.Helper()
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r.addr = lis.Addr().String()
	r.srv = grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		r.calls.Add(1)
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(r.srv, health.NewServer())
	go func() { _ = r.srv.Serve(lis) }()
	t.Cleanup(r.srv.Stop)
}

func TestAListTargetSpreadsCallsOverItsReplicasAndSkipsOneThatIsDown(t *testing.T) {
	a, b := &replica{}, &replica{}
	a.start(t)
	b.start(t)
	conn, err := Dial(a.addr+","+b.addr, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	check := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	// Round-robin uses a replica once its connection is up; both come up within moments.
	testkit.Eventually(t, "both replicas are called", func() bool {
		_ = check()
		return a.calls.Load() > 0 && b.calls.Load() > 0
	})
	a.calls.Store(0)
	b.calls.Store(0)
	for range 40 {
		if err := check(); err != nil {
			t.Fatal(err)
		}
	}
	if a.calls.Load() < 10 || b.calls.Load() < 10 {
		t.Fatalf("40 calls went %d to one replica and %d to the other, want both used", a.calls.Load(), b.calls.Load())
	}

	a.srv.Stop()
	// Calls already past the picker when the replica went away may fail, and one call may succeed
	// on the live replica before the connection has noticed the other is gone; a run of successes
	// longer than the replica count means the picker has dropped the stopped replica.
	testkit.Eventually(t, "calls succeed with one replica down", func() bool {
		for range 6 {
			if check() != nil {
				return false
			}
		}
		return true
	})
	before := b.calls.Load()
	for range 20 {
		if err := check(); err != nil {
			t.Fatalf("a call with one of two replicas down: %v", err)
		}
	}
	if got := b.calls.Load() - before; got != 20 {
		t.Fatalf("the replica that is up answered %d of 20 calls", got)
	}

	restarted := &replica{addr: a.addr}
	restarted.start(t)
	testkit.Eventually(t, "the restarted replica gets calls again", func() bool {
		_ = check()
		return restarted.calls.Load() > 0
	})
}

func TestAListTargetWithAnEntryThatIsNotHostPortIsRefused(t *testing.T) {
	for _, target := range []string{"127.0.0.1:1,", "127.0.0.1:1,tenant", ",127.0.0.1:1", "a:1, ,b:2"} {
		if conn, err := Dial(target, "", nil); err == nil {
			conn.Close()
			t.Errorf("Dial(%q) accepted", target)
		}
	}
}

func TestAddressSettingsAcceptWhatDialResolves(t *testing.T) {
	for target, ok := range map[string]bool{
		"tenant:9102":                     true,
		"127.0.0.1:44389,127.0.0.1:45745": true,
		"dns:///tenant.berth.svc:9102":    true,
		"passthrough:///127.0.0.1:1":      true,
		"tenant":                          false,
		"127.0.0.1:1,tenant":              false,
		"127.0.0.1:1,,127.0.0.1:2":        false,
	} {
		if err := CheckTarget(target); (err == nil) != ok {
			t.Errorf("CheckTarget(%q) = %v, want ok %v", target, err, ok)
		}
	}
}
