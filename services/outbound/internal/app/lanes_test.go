package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/services/outbound/internal/adapters/memory"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// countingStore counts the claims made on a memory store and the deliveries they took.
type countingStore struct {
	*memory.Store
	claims, claimed atomic.Int64
}

func (c *countingStore) ClaimDue(ctx context.Context, cl app.Claim) ([]domain.Delivery, error) {
	ds, err := c.Store.ClaimDue(ctx, cl)
	c.claims.Add(1)
	c.claimed.Add(int64(len(ds)))
	return ds, err
}

func newCountingStore() *countingStore {
	return &countingStore{Store: memory.New(&events.MemoryOutbox{})}
}

// gate is a receiver that holds every request until it is opened, then takes each delivery.
type gate struct {
	*receiver
	open    chan struct{}
	arrived atomic.Int64
}

func newGate(t *testing.T) *gate {
	return &gate{receiver: newReceiver(t), open: make(chan struct{})}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.arrived.Add(1)
	select {
	case <-g.open:
	case <-r.Context().Done():
		return
	}
	g.receiver.ServeHTTP(w, r)
}

// serve runs h as an endpoint's receiver until the test ends and returns its URL.
func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// startHeld registers an endpoint at a receiver that holds every request until its gate opens, on a
// store that counts claims, and starts the runner; stop ends the runner early.
func startHeld(t *testing.T) (store *countingStore, svc *app.Service, g *gate, e domain.Endpoint, stop func()) {
	store = newCountingStore()
	svc = newServiceOn(t, store, 1)
	g = newGate(t)
	e = register(t, svc, serve(t, g), g.receiver)
	stop = run(t, svc)
	testkit.Eventually(t, "the runner is ready", func() bool { return store.claims.Load() >= 1 })
	return store, svc, g, e, stop
}

// A new delivery is leased to the runner of the process that records it and handed over in memory
// once committed: no claim reads it back from the store.
func TestDeliveriesHandedToTheRunnerAreSentWithoutAClaim(t *testing.T) {
	store := newCountingStore()
	svc := newServiceOn(t, store, 1)
	rec := newReceiver(t)
	register(t, svc, serve(t, rec), rec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.RunDeliveries(ctx, time.Hour, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	testkit.Eventually(t, "the runner's first claim", func() bool { return store.claims.Load() == 1 })

	const n = 50
	publish(t, svc, n)
	testkit.Eventually(t, "every delivery arrives", func() bool { return rec.distinct() == n })
	if c := store.claimed.Load(); c != 0 {
		t.Errorf("claims took %d deliveries that had been handed to the runner", c)
	}
	if c := store.claims.Load(); c != 1 {
		t.Errorf("%d claims were made after the first, want none: nothing was left in the store", c-1)
	}
}

// An endpoint's lane holds a bounded number of deliveries in memory. What a consumer records beyond
// that stays in the store unleased, and is claimed once the lane has emptied: every delivery
// arrives, each once.
func TestDeliveriesBeyondAFullLaneWaitInTheStoreAndEachArrivesOnce(t *testing.T) {
	store, svc, g, _, _ := startHeld(t)
	const n = 16*64 + 64 + 200 // the lane's bound, its batch in flight, and more
	publish(t, svc, n)
	testkit.Eventually(t, "the first batch reaches the held receiver", func() bool { return g.arrived.Load() > 0 })
	close(g.open)
	testkit.Eventually(t, "every delivery arrives", func() bool { return g.distinct() == n })
	if store.claimed.Load() == 0 {
		t.Fatal("no delivery was claimed from the store: the lane was never full and the test proves nothing")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, c := range g.got {
		if c != 1 {
			t.Errorf("delivery %s arrived %d times", id, c)
		}
	}
}

// A runner that stops gives back what waited in its lanes, unsent: another replica sends it at
// once instead of when the leases end (three minutes at this scale).
func TestAStoppedRunnerGivesBackWhatWaitedInItsLanesToAnotherReplicaAtOnce(t *testing.T) {
	store, first, g, e, stop := startHeld(t)
	const n = 100
	publish(t, first, n)
	testkit.Eventually(t, "the first batch reaches the held receiver", func() bool { return g.arrived.Load() > 0 })
	stop()
	close(g.open)
	// The batch being sent was cut short: it stays leased until its lease ends. The rest is given back.
	views, err := store.ListDeliveries(context.Background(), appID, e.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var givenBack []string
	for _, v := range views {
		if v.Delivery.LeaseUntil.IsZero() {
			givenBack = append(givenBack, v.Delivery.ID)
		}
	}
	if len(givenBack) < n-64 || len(givenBack) == n {
		t.Fatalf("%d of %d deliveries were given back, want all but the batch that was being sent (at most 64)", len(givenBack), n)
	}

	second := newServiceOn(t, store, 1)
	run(t, second)
	testkit.Eventually(t, "the deliveries given back reach the receiver through the other replica", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, id := range givenBack {
			if g.got[id] == 0 {
				return false
			}
		}
		return true
	})
}

// A delivery that waits in a lane behind a slow endpoint longer than its lease allows has its
// lease renewed before it is sent, so another replica's claim never takes it meanwhile: with two
// replicas, each delivery arrives once.
func TestALeaseRunningOutInALaneIsRenewedSoNoOtherReplicaSendsItToo(t *testing.T) {
	// At 0.002 a lease is 360 ms and a batch may take 240 ms: a delivery that waited in the lane
	// over 120 ms is renewed. Six batches of 64 at 8 at a time, 10 ms each, take 480 ms.
	store := newCountingStore()
	first, second := newServiceOn(t, store, 0.002), newServiceOn(t, store, 0.002)
	var (
		mu  sync.Mutex
		got = map[string]int{}
	)
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	register(t, first, url, nil)
	run(t, first)
	run(t, second)
	testkit.Eventually(t, "both runners are ready", func() bool { return store.claims.Load() >= 2 })

	const n = 6 * 64
	publish(t, first, n)
	testkit.Eventually(t, "every delivery arrives", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n
	})
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for id, c := range got {
		if c != 1 {
			t.Errorf("delivery %s arrived %d times", id, c)
		}
	}
}
