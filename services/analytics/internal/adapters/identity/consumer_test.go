package identity_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/services/analytics/internal/adapters/identity"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/adapters/tenant"
	"github.com/berthhq/berth/services/analytics/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newEvent(t *testing.T, source string, eventType eventsv1.Type, appID string, payload proto.Message) events.Event {
	t.Helper()
	ev, err := events.New(source, eventType, appID, payload)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestConsumersApplyBothContextsAndAcknowledgeMalformedEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bus, _ := natstest.New(t)
	store := memory.New()
	inbox := events.NewMemoryInbox()
	svc, err := app.New(app.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, consume := range []func(context.Context, events.Bus, events.Inbox, *app.Service, *slog.Logger) (*events.Consumer, error){identity.Consume, tenant.Consume} {
		consumer, err := consume(ctx, bus, inbox, svc, quiet)
		if err != nil {
			t.Fatal(err)
		}
		defer consumer.Stop()
	}

	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	for _, ev := range []events.Event{
		newEvent(t, "identity", identityv1.EventUserSignedIn, appID, &identityv1.UserSignedIn{AppId: appID, UserId: "not-a-uuid"}),
		newEvent(t, "tenant", tenantv1.EventTenantCreated, appID, &tenantv1.TenantChanged{AppId: appID, TenantId: tenantID, Tenant: &tenantv1.Tenant{Name: "Acme"}}),
		newEvent(t, "identity", identityv1.EventUserSignedIn, appID, &identityv1.UserSignedIn{
			AppId: appID, UserId: userID, TenantRef: tenantID, User: &identityv1.TenantUser{Name: "Ada"},
		}),
	} {
		if err := bus.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}

	testkit.Eventually(t, "the valid events are applied: one sign-in, with its tenant", func() bool {
		recs, err := store.ListSignIns(ctx, appID, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return len(recs) == 1 && recs[0].Tenant != nil
	})
	// The malformed event was acknowledged, not handed back for retries.
	for _, c := range []struct{ stream, durable string }{
		{bus.Stream("identity"), identity.Durable},
		{bus.Stream("tenant"), tenant.Durable},
	} {
		var info *jetstream.ConsumerInfo
		testkit.Eventually(t, c.durable+" has acknowledged every event", func() bool {
			cons, err := bus.JS.Consumer(ctx, c.stream, c.durable)
			if err != nil {
				t.Fatalf("durable %s on %s: %v", c.durable, c.stream, err)
			}
			if info, err = cons.Info(ctx); err != nil {
				t.Fatal(err)
			}
			return info.NumAckPending == 0 && info.NumPending == 0
		})
		if info.NumRedelivered != 0 {
			t.Fatalf("%s redelivered %d events", c.durable, info.NumRedelivered)
		}
	}
}
