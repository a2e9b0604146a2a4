package identity_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/tenant/internal/adapters/identity"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/adapters/postgres"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// store is one of the tenant service's stores with the outbox its writes feed and the inbox that
// belongs with it.
type store struct {
	tenants app.Store
	outbox  events.OutboxSource
	inbox   events.Inbox
}

var stores = []struct {
	name string
	open func(t *testing.T) store
}{
	{"memory", func(*testing.T) store {
		outbox := &events.MemoryOutbox{}
		return store{tenants: memory.New(outbox), outbox: outbox, inbox: events.NewMemoryInbox()}
	}},
	{"postgres", func(t *testing.T) store {
		pool := pgtest.New(t, "tenant-consumer", postgres.Migrate)
		return store{tenants: postgres.New(pool), outbox: events.NewPGOutbox(pool), inbox: events.NewPGInbox(pool)}
	}},
}

// seed stores a tenant of appID; subscribed gives it a pspx subscription, as billing would have.
func seed(t *testing.T, tenants app.Store, appID string, subscribed bool) domain.Tenant {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tn, err := domain.Create(domain.NewTenant{ID: uuid.NewString(), AppID: appID, Name: "Acme"}, now, uuid.NewString)
	if err != nil {
		t.Fatal(err)
	}
	if subscribed {
		tn.Billing.PspxSubscriptionID = "sub_1"
	}
	if err := tenants.CreateTenant(context.Background(), tn); err != nil {
		t.Fatal(err)
	}
	return tn
}

func userDeleted(t *testing.T, appID, tenantRef string, usersLeft int32) events.Event {
	t.Helper()
	ev, err := events.New("identity", identityv1.EventUserDeleted, appID, &identityv1.UserDeleted{
		AppId: appID, UserId: uuid.NewString(), TenantRef: tenantRef, TenantUsersLeft: usersLeft,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func publish(t *testing.T, bus events.Bus, ev events.Event) {
	t.Helper()
	if err := bus.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

// redeliver publishes a copy of ev without its message id, so JetStream's duplicate window does
// not drop it and the consumer sees the event a second time, as after a lost ack.
func redeliver(t *testing.T, bus events.Bus, ev events.Event) {
	t.Helper()
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.JS.Publish(context.Background(), bus.Subject(ev.Type), body); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, tenants app.Store, tn domain.Tenant) domain.Tenant {
	t.Helper()
	got, err := tenants.GetTenant(context.Background(), tn.AppID, tn.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// updates returns the tenant.tenant.updated events waiting in the outbox, by tenant id.
func updates(t *testing.T, outbox events.OutboxSource) map[string][]*tenantv1.TenantChanged {
	t.Helper()
	evs, err := outbox.Pending(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*tenantv1.TenantChanged{}
	for _, ev := range evs {
		if ev.Type != tenantv1.EventTenantUpdated {
			continue
		}
		var p tenantv1.TenantChanged
		if err := ev.Decode(&p); err != nil {
			t.Fatal(err)
		}
		out[p.GetTenantId()] = append(out[p.GetTenantId()], &p)
	}
	return out
}

// TestUserDeletedRetiresTheLastUsersTenantOnce drives the consumer through JetStream: the event
// that deletes a tenant's last user, a redelivered copy of it, events that must change nothing or
// can never apply, and a marker event last. One durable consumer handles its messages in stream
// order, so once the marker's tenant is retired every earlier message has been handled.
func TestUserDeletedRetiresTheLastUsersTenantOnce(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := st.open(t)
			bus, _ := natstest.New(t)
			svc, err := app.New(app.Config{Store: s.tenants, NewID: uuid.NewString})
			if err != nil {
				t.Fatal(err)
			}
			consumer, err := identity.ConsumeUserEvents(ctx, bus, s.inbox, svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer consumer.Stop()

			appID := uuid.NewString()
			subscribed := seed(t, s.tenants, appID, true)
			shared := seed(t, s.tenants, appID, true)
			marker := seed(t, s.tenants, appID, false)
			last := userDeleted(t, appID, subscribed.ID, 0)

			publish(t, bus, last)
			redeliver(t, bus, last)
			publish(t, bus, userDeleted(t, appID, shared.ID, 1))            // users left
			publish(t, bus, userDeleted(t, appID, "", 0))                   // a user without a tenant
			publish(t, bus, userDeleted(t, appID, uuid.NewString(), 0))     // a tenant that does not exist
			publish(t, bus, userDeleted(t, uuid.NewString(), shared.ID, 0)) // another app's tenant
			publish(t, bus, userDeleted(t, appID, "not-a-uuid", 0))
			publish(t, bus, events.Event{ID: uuid.NewString(), Type: identityv1.EventUserDeleted, Source: "identity",
				AppID: appID, Time: time.Now().UTC(), Data: json.RawMessage(`{"tenantUsersLeft":"many"}`)})
			publish(t, bus, userDeleted(t, appID, marker.ID, 0))
			const published = 9

			testkit.Eventually(t, "the marker's tenant is retired", func() bool { return get(t, s.tenants, marker).Deleted })
			cons, err := bus.JS.Consumer(ctx, bus.Stream("identity"), identity.Durable)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, "every message is acknowledged", func() bool {
				info, err := cons.Info(ctx)
				return err == nil && info.AckFloor.Stream == published && info.NumAckPending == 0 && info.NumRedelivered == 0
			})

			if got := get(t, s.tenants, subscribed); !got.Deleted || !got.Billing.PspxSubscriptionCancelAtPeriodEnd {
				t.Fatalf("the last user's tenant = %+v, want deleted and cancelling at period end", got)
			}
			if got := get(t, s.tenants, shared); got.Deleted || got.Billing.PspxSubscriptionCancelAtPeriodEnd {
				t.Fatalf("a tenant with users left = %+v, want it untouched", got)
			}
			byTenant := updates(t, s.outbox)
			want := &tenantv1.TenantChanged{AppId: appID, TenantId: subscribed.ID,
				ChangedFields: []string{"deleted", "pspxSubscriptionCancelAtPeriodEnd"}}
			if got := byTenant[subscribed.ID]; len(got) != 1 || !sameChange(got[0], want) {
				t.Fatalf("updates of the retired tenant = %v, want exactly one %v", got, want)
			}
			if got := byTenant[shared.ID]; len(got) != 0 {
				t.Fatalf("updates of the tenant with users left = %v", got)
			}
			if len(byTenant) != 2 {
				t.Fatalf("updates for %d tenants, want the retired one and the marker", len(byTenant))
			}
			// The inbox holds the event under the consumer's name: another delivery would not run.
			applied, err := s.inbox.Once(ctx, identity.Durable, last.ID, func(context.Context) error {
				t.Error("the inbox ran an event it had recorded")
				return nil
			})
			if err != nil || applied {
				t.Fatalf("inbox Once = %v, %v; want the event recorded", applied, err)
			}
		})
	}
}

func sameChange(got, want *tenantv1.TenantChanged) bool {
	return got.GetAppId() == want.GetAppId() && got.GetTenantId() == want.GetTenantId() &&
		slices.Equal(got.GetChangedFields(), want.GetChangedFields()) && got.GetTenant().GetDeleted()
}
