package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/memory"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// newService builds the use cases on a memory store with the real HTTP sender, allowed to reach
// loopback receivers, and the retry schedule scaled by scale.
func newService(t *testing.T, scale float64) (*app.Service, *memory.Store) {
	t.Helper()
	store := memory.New(&events.MemoryOutbox{})
	return newServiceOn(t, store, scale), store
}

// newServiceOn is newService on a given store: replicas share one.
func newServiceOn(t *testing.T, store app.Store, scale float64) *app.Service {
	t.Helper()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(app.Config{Store: store, Box: box, Sender: httpsend.New(true), URLs: domain.URLPolicy{AllowHTTP: true},
		TimeScale: scale, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// run starts the delivery runner until the test ends; stop ends it early and waits for it.
func run(t *testing.T, svc *app.Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunDeliveries(ctx, 5*time.Millisecond, nil)
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}
