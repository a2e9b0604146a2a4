package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/memory"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/adapters/stream"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var stores = []struct {
	name string
	open func(t *testing.T) (app.Store, events.Inbox)
}{
	{"memory", func(*testing.T) (app.Store, events.Inbox) {
		return memory.New(&events.MemoryOutbox{}), events.NewMemoryInbox()
	}},
	{"postgres", func(t *testing.T) (app.Store, events.Inbox) {
		pool := pgtest.New(t, "outbound-consumer", postgres.Migrate)
		return postgres.New(pool), events.NewPGInbox(pool)
	}},
}

func newService(t *testing.T, store app.Store) *app.Service {
	t.Helper()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(app.Config{Store: store, Box: box, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func userEvent(t *testing.T, typ string, appID string) events.Event {
	t.Helper()
	p := &identityv1.UserChanged{AppId: appID, UserId: uuid.NewString()}
	var ev events.Event
	var err error
	switch typ {
	case "created":
		ev, err = events.New("identity", identityv1.EventUserCreated, appID, p)
	default:
		ev, err = events.New("identity", identityv1.EventUserUpdated, appID, p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestEachEventBecomesOneDeliveryPerSubscribedEndpointEvenWhenRedelivered drives the identity
// consumer through JetStream: a user.updated, a copy of it redelivered (as after a lost ack), an
// event of another app, one no app hears about, and a marker last. One durable handles its
// messages in stream order, so once the marker's delivery is recorded every earlier one is.
func TestEachEventBecomesOneDeliveryPerSubscribedEndpointEvenWhenRedelivered(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store, inbox := st.open(t)
			svc := newService(t, store)
			bus, _ := natstest.New(t)
			c, err := stream.Consume(ctx, bus, inbox, svc, "identity", slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()

			appID := uuid.NewString()
			all, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: "https://example.com/all", Events: []string{"*"}})
			if err != nil {
				t.Fatal(err)
			}
			createdOnly, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: "https://example.com/created", Events: []string{"user.created"}})
			if err != nil {
				t.Fatal(err)
			}

			updated := userEvent(t, "updated", appID)
			for _, ev := range []events.Event{updated, userEvent(t, "updated", uuid.NewString())} {
				if err := bus.Publish(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			body, _ := json.Marshal(updated) // without its message id, so JetStream does not drop it
			if _, err := bus.JS.Publish(ctx, bus.Subject(updated.Type), body); err != nil {
				t.Fatal(err)
			}
			signedIn, _ := events.New("identity", identityv1.EventUserSignedIn, appID, &identityv1.UserSignedIn{AppId: appID})
			if err := bus.Publish(ctx, signedIn); err != nil {
				t.Fatal(err)
			}
			if err := bus.Publish(ctx, userEvent(t, "created", appID)); err != nil {
				t.Fatal(err)
			}

			list := func(e domain.Endpoint) []app.DeliveryView {
				vs, err := store.ListDeliveries(ctx, appID, e.ID, 100)
				if err != nil {
					t.Fatal(err)
				}
				return vs
			}
			testkit.Eventually(t, "the marker's delivery is recorded", func() bool { return len(list(createdOnly.Endpoint)) == 1 })
			got := map[string]int{}
			for _, v := range list(all.Endpoint) {
				got[v.Delivery.Type]++
			}
			if got["user.updated"] != 1 || got["user.created"] != 1 || len(got) != 2 {
				t.Errorf("the wildcard endpoint has deliveries %v, want one user.updated and one user.created", got)
			}
		})
	}
}

// TestDeliveriesCommitWithTheInboxRecord holds the Postgres inbox's promise for this consumer: a
// handler that fails after Publish leaves neither the deliveries nor the record, and a recorded
// event never records its deliveries again.
func TestDeliveriesCommitWithTheInboxRecord(t *testing.T) {
	pool := pgtest.New(t, "outbound-inbox", postgres.Migrate)
	store, inbox := postgres.New(pool), events.NewPGInbox(pool)
	svc := newService(t, store)
	ctx := context.Background()
	appID := uuid.NewString()
	e, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: "https://example.com/h", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := userEvent(t, "updated", appID)
	var p identityv1.UserChanged
	if err := ev.Decode(&p); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("the consumer failed after recording")
	if _, err := inbox.Once(ctx, "outbound-identity", ev.ID, func(ctx context.Context) error {
		if err := svc.Publish(ctx, ev, &p); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Once: %v", err)
	}
	if vs, _ := store.ListDeliveries(ctx, appID, e.Endpoint.ID, 10); len(vs) != 0 {
		t.Fatalf("a failed handler left %d deliveries", len(vs))
	}
	for range 2 {
		if _, err := inbox.Once(ctx, "outbound-identity", ev.ID, func(ctx context.Context) error { return svc.Publish(ctx, ev, &p) }); err != nil {
			t.Fatal(err)
		}
	}
	if vs, _ := store.ListDeliveries(ctx, appID, e.Endpoint.ID, 10); len(vs) != 1 {
		t.Fatalf("an event handled twice left %d deliveries, want 1", len(vs))
	}
}

// TestADeliveryRecordedByTheConsumerIsSentWithoutWaitingForThePoll runs the delivery runner with
// an hour between polls: only the consumer's wake-up can start the delivery, and it must come
// after the inbox transaction commits, or the runner finds nothing and sleeps.
func TestADeliveryRecordedByTheConsumerIsSentWithoutWaitingForThePoll(t *testing.T) {
	pool := pgtest.New(t, "outbound-wake", postgres.Migrate)
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(app.Config{Store: postgres.New(pool), Box: box, Sender: httpsend.New(true),
		URLs: domain.URLPolicy{AllowHTTP: true}, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	var arrived atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { arrived.Add(1) }))
	t.Cleanup(receiver.Close)
	ctx, cancel := context.WithCancel(context.Background())
	appID := uuid.NewString()
	if _, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: receiver.URL, Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); svc.RunDeliveries(ctx, time.Hour, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	bus, _ := natstest.New(t)
	c, err := stream.Consume(ctx, bus, events.NewPGInbox(pool), svc, "identity", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()

	for i := range 3 {
		if err := bus.Publish(ctx, userEvent(t, "updated", appID)); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "the delivery arrives long before the next poll", func() bool { return arrived.Load() == int32(i+1) })
	}
}
