package postgres_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// benchEndpoints is how many endpoints of one app receive every event: the delivery runner sends
// each endpoint's queue on its own goroutine, so the baseline posts from as many goroutines.
const benchEndpoints = 8

// BenchmarkDeliveries measures webhook deliveries per second to a local receiver that answers 204
// at once, beside a baseline in the same run:
//
//   - baseline: a bare HTTP POST loop of the same body, from benchEndpoints goroutines, with the
//     sender's HTTP client (no signing, no database).
//   - postgres: b.N deliveries recorded as the consumer records them (one transaction per event,
//     one delivery per endpoint) and sent by one delivery runner, timed until the receiver has
//     every one. Every webhook-id must arrive, or the benchmark fails.
func BenchmarkDeliveries(b *testing.B) {
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(receiver.Close)
	body := []byte(`{"type":"user.updated","timestamp":"2026-01-01T00:00:00Z","data":{"appId":"x","userId":"y"}}`)

	b.Run("baseline", func(b *testing.B) {
		sender := httpsend.New(true)
		received.Store(0)
		per := max(1, b.N/benchEndpoints)
		start := time.Now()
		var wg sync.WaitGroup
		for range benchEndpoints {
			wg.Go(func() {
				for range per {
					if a := sender.Send(context.Background(), receiver.URL, map[string]string{"Content-Type": "application/json"}, bytes.Clone(body)); !a.Succeeded() {
						b.Errorf("bare POST: %+v", a)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(received.Load())/time.Since(start).Seconds(), "deliveries/s")
	})

	b.Run("postgres", func(b *testing.B) {
		ctx := context.Background()
		pool, err := pgxx.Open(ctx, pgtest.URL(b, "outbound", postgres.Migrate))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		box, _ := sealbox.New(make([]byte, sealbox.KeySize))
		svc, err := app.New(app.Config{Store: postgres.New(pool), Box: box, Sender: httpsend.New(true),
			URLs: domain.URLPolicy{AllowHTTP: true}, NewID: uuid.NewString})
		if err != nil {
			b.Fatal(err)
		}
		appID := uuid.NewString()
		for range benchEndpoints {
			if _, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: receiver.URL, Events: []string{"*"}}); err != nil {
				b.Fatal(err)
			}
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); svc.RunDeliveries(runCtx, 5*time.Millisecond, nil) }()
		b.Cleanup(func() { cancel(); <-done })

		received.Store(0)
		eventsN := max(1, b.N/benchEndpoints)
		want := int64(eventsN * benchEndpoints)
		b.ResetTimer()
		start := time.Now()
		for range eventsN {
			p := &identityv1.UserChanged{AppId: appID, UserId: uuid.NewString()}
			ev, err := events.New("identity", identityv1.EventUserUpdated, appID, p)
			if err != nil {
				b.Fatal(err)
			}
			if err := svc.Publish(ctx, ev, p); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(time.Minute)
		for received.Load() < want {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d deliveries arrived within a minute", received.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
		b.ReportMetric(float64(want)/time.Since(start).Seconds(), "deliveries/s")
	})
}
