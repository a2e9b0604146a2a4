package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	secret     = "whsec_kill"
	adminToken = "admin-kill"
)

// keyedBilling stands in for billing over gRPC: it applies each pspx object's effect once, keyed
// by the object (as billing keys by what it refetches), and lets the test hold an apply in
// flight, before or after its effect commits, to kill the ingest process there.
type keyedBilling struct {
	billingv1.UnimplementedProviderEventServiceServer
	mu      sync.Mutex
	effects map[string]int // object id -> effects applied
	calls   int
	commit  bool          // whether the held call commits its effect before it is held
	held    chan struct{} // closed when a call is held
	hold    bool
}

func (b *keyedBilling) ResolvePspxCustomer(context.Context, *billingv1.ResolvePspxCustomerRequest) (*billingv1.PspxCustomerConnection, error) {
	return &billingv1.PspxCustomerConnection{ConnectionId: "7d0f6a52-3c1e-4b8a-9f2d-5e6c7b8a9d01", WebhookSecrets: []string{secret}}, nil
}

func (b *keyedBilling) ApplyPspxEvent(ctx context.Context, req *billingv1.ApplyPspxEventRequest) (*billingv1.AppliedEvent, error) {
	var obj struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(req.GetObject(), &obj)
	b.mu.Lock()
	b.calls++
	hold := b.hold
	b.hold = false
	if !hold || b.commit {
		if b.effects[obj.ID] == 0 {
			b.effects[obj.ID]++
		}
	}
	b.mu.Unlock()
	if hold {
		close(b.held)
		<-ctx.Done() // the caller died
		return nil, ctx.Err()
	}
	return &billingv1.AppliedEvent{Effect: "x"}, nil
}

// TestAKilledIngestProcessAppliesAStoredCallOnceAfterRestart runs the real webhook binary on
// PostgreSQL, SIGKILLs it while billing applies a stored call (before billing committed the
// effect, and after), starts it again and redelivers: the call is applied exactly once and the
// store holds it once, applied.
func TestAKilledIngestProcessAppliesAStoredCallOnceAfterRestart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "webhook")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	nats, err := natsx.StartEmbedded("", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Close)
	for _, c := range []struct {
		name   string
		commit bool
	}{{"killed before billing committed", false}, {"killed after billing committed", true}} {
		t.Run(c.name, func(t *testing.T) {
			dbURL := pgtest.URL(t, "webhook-kill", func(context.Context, *pgxpool.Pool) error { return nil })
			billing := &keyedBilling{effects: map[string]int{}, held: make(chan struct{}), hold: true, commit: c.commit}
			billingAddr := serveBilling(t, billing)
			addr := freeAddr(t)
			env := append(os.Environ(), "BERTH_DATABASE_URL="+dbURL, "BERTH_GRPC_ADDR="+addr, "BERTH_OPS_ADDR="+freeAddr(t),
				"BERTH_NATS_URL="+nats.Server.ClientURL(), "BERTH_ADMIN_TOKEN="+adminToken, "BERTH_SERVICE_TOKEN=svc",
				"BERTH_BILLING_ADDR="+billingAddr, "BERTH_PUBLIC_URL=http://berth.test", "BERTH_LOG_LEVEL=error",
				// Identity verifies only operator tokens here, which this test never sends.
				"BERTH_IDENTITY_ADDR="+freeAddr(t))

			first := startProcess(t, bin, env)
			conn := dial(t, addr, "")
			ingest := webhookv1.NewWebhookIngestServiceClient(conn)
			body := `{"id":"evt_kill","object":"event","type":"invoice.paid","livemode":false,"data":{"object":{"id":"in_kill","object":"invoice","customer":"cus_kill"}}}`
			answered := make(chan error, 1)
			go func() {
				_, err := receive(ingest, body)
				answered <- err
			}()
			select {
			case <-billing.held:
			case err := <-answered:
				t.Fatalf("the first delivery answered before billing held it: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("billing never saw the stored call")
			}
			if err := first.Process.Kill(); err != nil { // SIGKILL: no shutdown of any kind
				t.Fatal(err)
			}
			_ = first.Wait()
			if err := <-answered; err == nil {
				t.Fatal("a delivery to a killed process was answered as received")
			}

			startProcess(t, bin, env)
			if _, err := receive(ingest, body); err != nil {
				t.Fatalf("the redelivery after the restart: %v", err)
			}
			if _, err := receive(ingest, body); err != nil { // and once more: a no-op
				t.Fatal(err)
			}
			billing.mu.Lock()
			effects, calls := billing.effects["in_kill"], billing.calls
			billing.mu.Unlock()
			if effects != 1 || calls != 2 {
				t.Fatalf("billing applied %d effects in %d calls, want 1 in 2 (the killed one and the redelivery)", effects, calls)
			}
			list, err := webhookv1.NewWebhookAdminServiceClient(dial(t, addr, adminToken)).ListEvents(context.Background(), &webhookv1.ListEventsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(list.GetEvents()); n != 1 || list.GetEvents()[0].GetOutcome() != "applied" || list.GetEvents()[0].GetProviderEventId() != "evt_kill" {
				t.Fatalf("stored calls: %v", list.GetEvents())
			}
		})
	}
}

func receive(c webhookv1.WebhookIngestServiceClient, body string) (*webhookv1.Receipt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Now().Unix()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(fmt.Appendf(nil, "%d.%s", now, body))
	return c.ReceivePspx(ctx, &webhookv1.Delivery{Body: []byte(body), ContentType: "application/json", Host: "berth.test",
		Signature: fmt.Sprintf("t=%d,v1=%s", now, hex.EncodeToString(mac.Sum(nil)))}, grpc.WaitForReady(true)) // the process may still be starting
}

func startProcess(t *testing.T, bin string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func serveBilling(t *testing.T, b *keyedBilling) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	billingv1.RegisterProviderEventServiceServer(srv, b)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

func dial(t *testing.T, addr, token string) *grpc.ClientConn {
	t.Helper()
	opts := grpcx.ClientOptions("", nil)
	if token != "" {
		opts = append(opts, grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(token)))
	}
	c, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
