package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestAKilledDeliveringProcessLosesNoDeliveryAfterRestart runs the real outbound binary on
// PostgreSQL, SIGKILLs it while it holds a batch of attempts open at the receiver, starts it
// again, and checks that every delivery reaches the receiver: the killed batch's lease ends
// (scaled by BERTH_OUTBOUND_TIME_SCALE) and the restarted process sends it with the same
// webhook-ids.
func TestAKilledDeliveringProcessLosesNoDeliveryAfterRestart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "outbound")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	nats, err := natsx.StartEmbedded("", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Close)
	ctx := context.Background()
	dbURL := pgtest.URL(t, "outbound-kill", postgres.Migrate)
	pool, err := pgxx.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	key := make([]byte, sealbox.KeySize)
	key[0] = 7
	box, _ := sealbox.New(key)

	var (
		mu      sync.Mutex
		got     = map[string]int{}
		holding = true // the first process's requests are held until it is killed
	)
	held, release := make(chan struct{}, 100), make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hold := holding
		mu.Unlock()
		if hold {
			held <- struct{}{}
			select { // until the sender dies, or the test lets go of the requests it killed
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)

	// The deliveries are recorded as the consumer records them, on the database the binary uses.
	svc, err := app.New(app.Config{Store: postgres.New(pool), Box: box, URLs: domain.URLPolicy{AllowHTTP: true}, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	appID := uuid.NewString()
	if _, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: receiver.URL, Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for range n {
		p := &identityv1.UserChanged{AppId: appID, UserId: uuid.NewString()}
		ev, err := events.New("identity", identityv1.EventUserUpdated, appID, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Publish(ctx, ev, p); err != nil {
			t.Fatal(err)
		}
	}

	env := append(os.Environ(), "BERTH_DATABASE_URL="+dbURL, "BERTH_GRPC_ADDR="+freeAddr(t), "BERTH_OPS_ADDR="+freeAddr(t),
		"BERTH_NATS_URL="+nats.Server.ClientURL(), "BERTH_SERVICE_TOKEN=svc", "BERTH_IDENTITY_ADDR="+freeAddr(t),
		"BERTH_SECRET_KEY=0700000000000000000000000000000000000000000000000000000000000000",
		"BERTH_OUTBOUND_ALLOW_PRIVATE=true", "BERTH_OUTBOUND_TIME_SCALE=0.01", "BERTH_LOG_LEVEL=error")
	first := start(t, bin, env)
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the first process sent nothing")
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL mid-batch: no attempt of it is recorded
		t.Fatal(err)
	}
	_ = first.Wait()
	mu.Lock()
	holding = false
	mu.Unlock()
	close(release)

	start(t, bin, env)
	testkit.Eventually(t, "every delivery reaches the receiver after the restart", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n
	})
}

func start(t *testing.T, bin string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
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
