package stream_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/adapters/stream"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// benchEndpoints is how many endpoints of one app receive every event: the delivery runner sends
// each endpoint's queue on goroutines of its own, so the baseline posts from as many goroutines.
const benchEndpoints = 8

// peakRate is the postgres sub-benchmark's deliveries/s, which the latency one runs at half of.
var peakRate atomic.Uint64

// BenchmarkDeliveries measures webhook deliveries per second to a local receiver that answers 204
// at once, beside a baseline in the same run:
//
//   - baseline: a bare HTTP POST loop of a delivery's body, from benchEndpoints goroutines, with the
//     sender's HTTP client (no signing, no database, no events).
//   - postgres: the service's real path on PostgreSQL and JetStream. b.N/benchEndpoints events wait
//     in the stream; the timer starts with the consumer (batched inbox transactions recording a
//     delivery per endpoint) and the delivery runner, and stops when the receiver has every
//     delivery. Every one must arrive, or the benchmark fails.
//   - latency: events committed one per transaction to an outbox, as a service's change commits,
//     at half the postgres sub-benchmark's rate, carried by the relay, the consumer and the runner;
//     it reports the p50 and p99 from each commit to its deliveries' arrival.
func BenchmarkDeliveries(b *testing.B) {
	rx := newBenchReceiver(b)
	body := []byte(`{"type":"user.updated","timestamp":"2026-01-01T00:00:00Z","data":{"appId":"x","userId":"y"}}`)

	b.Run("baseline", func(b *testing.B) {
		sender := httpsend.New(true)
		rx.reset(false)
		per := max(1, b.N/benchEndpoints)
		start := time.Now()
		var wg sync.WaitGroup
		for range benchEndpoints {
			wg.Go(func() {
				for range per {
					if a := sender.Send(context.Background(), rx.url, map[string]string{"Content-Type": "application/json"}, bytes.Clone(body)); !a.Succeeded() {
						b.Errorf("bare POST: %+v", a)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(rx.received.Load())/time.Since(start).Seconds(), "deliveries/s")
	})

	b.Run("postgres", func(b *testing.B) {
		s := newBenchStack(b, rx.url)
		eventsN := max(1, b.N/benchEndpoints)
		for range eventsN {
			if err := s.bus.Publish(context.Background(), s.userUpdated(b, uuid.NewString())); err != nil {
				b.Fatal(err)
			}
		}
		rx.reset(false)
		b.ResetTimer()
		start := time.Now()
		s.start(b)
		want := int64(eventsN * benchEndpoints)
		rx.wait(b, want)
		rate := float64(want) / time.Since(start).Seconds()
		peakRate.Store(uint64(rate))
		b.ReportMetric(rate, "deliveries/s")
	})

	b.Run("latency", func(b *testing.B) {
		peak := float64(peakRate.Load())
		if peak == 0 {
			b.Skip("needs the postgres sub-benchmark's rate")
		}
		s := newBenchStack(b, rx.url)
		pool, err := pgxx.Open(context.Background(), pgtest.URL(b, "outbound-bench-source", func(ctx context.Context, pool *pgxpool.Pool) error {
			return pgxx.Migrate(ctx, pool, "events", events.Migrations)
		}))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		relayCtx, stopRelay := context.WithCancel(context.Background())
		relayDone := make(chan struct{})
		go func() {
			defer close(relayDone)
			_ = events.NewRelay("bench", events.NewPGOutbox(pool), s.bus, nil).Run(relayCtx)
		}()
		b.Cleanup(func() { stopRelay(); <-relayDone })
		s.start(b)

		eventsN := max(1, b.N/benchEndpoints)
		every := time.Duration(float64(time.Second) * benchEndpoints / (peak / 2))
		rx.reset(true)
		b.ResetTimer()
		var wg sync.WaitGroup
		tick := time.NewTicker(every)
		defer tick.Stop()
		for range eventsN {
			<-tick.C
			wg.Go(func() {
				user := uuid.NewString()
				ev := s.userUpdated(b, user)
				if err := pgxx.InTx(context.Background(), pool, func(ctx context.Context, tx pgx.Tx) error {
					return events.InsertOutbox(ctx, tx, ev)
				}); err != nil {
					b.Error(err)
					return
				}
				rx.committed(user, time.Now())
			})
		}
		wg.Wait()
		rx.wait(b, int64(eventsN*benchEndpoints))
		p50, p99 := rx.latencies(b)
		b.ReportMetric(float64(p50.Microseconds())/1000, "ms-p50-commit-to-receiver")
		b.ReportMetric(float64(p99.Microseconds())/1000, "ms-p99-commit-to-receiver")
		b.ReportMetric(peak/2, "offered-deliveries/s")
	})
}

// benchReceiver counts deliveries and, when timing, when each arrived: a delivery names its user in
// the body, whose event the benchmark committed at a known time.
type benchReceiver struct {
	url      string
	received atomic.Int64
	timing   atomic.Bool
	mu       sync.Mutex
	commits  map[string]time.Time // user id → when its event was committed
	arrivals map[string][]time.Time
}

func newBenchReceiver(b *testing.B) *benchReceiver {
	rx := &benchReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rx.timing.Load() {
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(r.Body)
			if user, ok := userOf(buf.Bytes()); ok {
				now := time.Now()
				rx.mu.Lock()
				rx.arrivals[user] = append(rx.arrivals[user], now)
				rx.mu.Unlock()
			}
		}
		rx.received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	rx.url = srv.URL
	return rx
}

// userOf finds "userId":"…" in a delivery's body.
func userOf(body []byte) (string, bool) {
	const key = `"userId":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return "", false
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return string(rest[:j]), true
}

func (rx *benchReceiver) reset(timing bool) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.received.Store(0)
	rx.commits, rx.arrivals = map[string]time.Time{}, map[string][]time.Time{}
	rx.timing.Store(timing)
}

func (rx *benchReceiver) committed(user string, at time.Time) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.commits[user] = at
}

func (rx *benchReceiver) wait(b *testing.B, want int64) {
	deadline := time.Now().Add(2 * time.Minute)
	for rx.received.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d deliveries arrived within two minutes", rx.received.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// latencies are the p50 and p99 from a commit to the arrival of each of its deliveries.
func (rx *benchReceiver) latencies(b *testing.B) (p50, p99 time.Duration) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	var ds []time.Duration
	for user, at := range rx.commits {
		for _, arrived := range rx.arrivals[user] {
			ds = append(ds, arrived.Sub(at))
		}
	}
	if len(ds) == 0 {
		b.Fatal("no delivery arrived for a committed event")
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

// benchStack is the outbound service on PostgreSQL with benchEndpoints endpoints of one app at the
// receiver, and the bus its consumer reads.
type benchStack struct {
	bus   events.Bus
	svc   *app.Service
	inbox events.Inbox
	appID string
}

func newBenchStack(b *testing.B, url string) *benchStack {
	ctx := context.Background()
	pool, err := pgxx.Open(ctx, pgtest.URL(b, "outbound", postgres.Migrate))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	box, _ := sealbox.New(make([]byte, sealbox.KeySize))
	svc, err := app.New(app.Config{Store: postgres.New(pool), Box: box, Sender: httpsend.New(true),
		URLs: domain.URLPolicy{AllowHTTP: true}, NewID: app.TimeOrderedID})
	if err != nil {
		b.Fatal(err)
	}
	s := &benchStack{svc: svc, inbox: events.NewPGInbox(pool), appID: uuid.NewString()}
	for range benchEndpoints {
		if _, err := svc.CreateEndpoint(ctx, s.appID, s.appID, app.EndpointInput{URL: url, Events: []string{"*"}}); err != nil {
			b.Fatal(err)
		}
	}
	s.bus, _ = natstest.New(b)
	return s
}

// start runs the identity consumer and the delivery runner (woken by what the consumer records,
// polling at the service's default otherwise) until the benchmark ends.
func (s *benchStack) start(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := stream.Consume(ctx, s.bus, s.inbox, s.svc, "identity", nil)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); s.svc.RunDeliveries(ctx, 250*time.Millisecond, nil) }()
	b.Cleanup(func() { c.Stop(); cancel(); <-done })
}

func (s *benchStack) userUpdated(b *testing.B, user string) events.Event {
	ev, err := events.New("identity", identityv1.EventUserUpdated, s.appID, &identityv1.UserChanged{AppId: s.appID, UserId: user})
	if err != nil {
		b.Fatal(err)
	}
	return ev
}
