package postgres_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// TestTwoReplicasSendEachDeliveryOnce runs two delivery runners on one database, as two replicas
// do: the claims' SKIP LOCKED and leases split the deliveries, so with a receiver that answers
// every attempt each webhook-id arrives exactly once.
func TestTwoReplicasSendEachDeliveryOnce(t *testing.T) {
	pool := pgtest.New(t, "outbound-replicas", postgres.Migrate)
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got = map[string]int{}
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)

	replicas := make([]*app.Service, 2)
	for i := range replicas {
		if replicas[i], err = app.New(app.Config{Store: postgres.New(pool), Box: box, Sender: httpsend.New(true),
			URLs: domain.URLPolicy{AllowHTTP: true}, NewID: uuid.NewString}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	appID := uuid.NewString()
	for range 3 {
		if _, err := replicas[0].CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: receiver.URL, Events: []string{"*"}}); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, r := range replicas {
		wg.Go(func() { r.RunDeliveries(runCtx, 5*time.Millisecond, nil) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })

	const n = 100
	for i := range n {
		p := &identityv1.UserChanged{AppId: appID, UserId: uuid.NewString()}
		ev, err := events.New("identity", identityv1.EventUserUpdated, appID, p)
		if err != nil {
			t.Fatal(err)
		}
		// Alternate the replica that records, as the consumers' shared durable does.
		if err := replicas[i%2].Publish(ctx, ev, p); err != nil {
			t.Fatal(err)
		}
	}
	distinct := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	testkit.Eventually(t, "every delivery arrives", func() bool { return distinct() == 3*n })
	time.Sleep(50 * time.Millisecond) // room for a duplicate to show
	mu.Lock()
	defer mu.Unlock()
	for id, c := range got {
		if c != 1 {
			t.Errorf("webhook-id %s arrived %d times", id, c)
		}
	}
}
