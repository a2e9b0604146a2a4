package audit_test

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/analytics/internal/adapters/audit"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var stores = []struct {
	name string
	open func(t *testing.T) (app.Store, events.Inbox)
}{
	{"memory", func(*testing.T) (app.Store, events.Inbox) { return memory.New(), events.NewMemoryInbox() }},
	{"postgres", func(t *testing.T) (app.Store, events.Inbox) {
		pool := pgtest.New(t, "analytics-audit", postgres.Migrate)
		return postgres.New(pool), events.NewPGInbox(pool)
	}},
}

// consumeAll starts the audit consumers of identity and tenant and returns their stop.
func consumeAll(t *testing.T, ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service) func() {
	t.Helper()
	var stops []func()
	for _, source := range []string{"identity", "tenant"} {
		c, err := audit.Consume(ctx, bus, inbox, svc, source, quiet)
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, c.Stop)
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

func TestEveryEventIsAuditedExactlyOnceEvenWhenTheStreamIsReplayed(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			bus, _ := natstest.New(t)
			store, inbox := st.open(t)
			svc, err := app.New(app.Config{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			appID, userID, tenantID, keyID := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
			updated, err := events.New("identity", identityv1.EventUserUpdated, appID, &identityv1.UserChanged{
				AppId: appID, UserId: userID, User: &identityv1.TenantUser{Name: "Ada", Email: "ada@example.com"},
				ChangedFields: []string{"name", "email"},
			})
			if err != nil {
				t.Fatal(err)
			}
			updated.Actor = &events.Actor{Kind: events.ActorAPIKey, ID: keyID, KeyType: "write", RequestID: "req-1", ClientAddress: "203.0.113.7"}
			created, err := events.New("tenant", tenantv1.EventTenantCreated, appID, &tenantv1.TenantChanged{AppId: appID, TenantId: tenantID, Tenant: &tenantv1.Tenant{Name: "Acme"}})
			if err != nil {
				t.Fatal(err)
			}
			// created has no actor: an envelope written before actors were stamped.
			for _, ev := range []events.Event{updated, created} {
				if err := bus.Publish(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			want := []domain.AuditEntry{
				{ID: created.ID, AppID: appID, At: created.Time, Action: "tenant.tenant.created", TargetType: "tenant", TargetID: tenantID},
				{ID: updated.ID, AppID: appID, At: updated.Time, Action: "identity.user.updated", TargetType: "user", TargetID: userID,
					ActorKind: "api_key", ActorID: keyID, ActorKeyType: "write", RequestID: "req-1", ClientAddress: "203.0.113.7",
					ChangedFields: []string{"name", "email"}},
			}
			if created.Time.Equal(updated.Time) && created.ID < updated.ID {
				want[0], want[1] = want[1], want[0] // same microsecond: ties go by id, descending
			}
			listed := func() []domain.AuditEntry {
				var out []domain.AuditEntry
				_, err := svc.ListAuditEntries(ctx, appID, domain.AuditQuery{From: time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly), To: time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)},
					app.Visitor[domain.AuditEntry]{Count: func(int) error { return nil }, Each: func(e domain.AuditEntry) error { out = append(out, e); return nil }})
				if err != nil {
					t.Fatal(err)
				}
				return out
			}

			stop := consumeAll(t, ctx, bus, inbox, svc)
			testkit.Eventually(t, "both events are audited", func() bool { return len(listed()) == 2 })
			stop()
			if got := listed(); !reflect.DeepEqual(got, want) {
				t.Fatalf("audited %+v\nwant %+v", got, want)
			}

			// A replay: the durables are dropped and made again, so the streams hand over every
			// event once more; the inbox keeps each from being recorded twice.
			for _, source := range []string{"identity", "tenant"} {
				if err := bus.JS.DeleteConsumer(ctx, bus.Stream(source), audit.Durable(source)); err != nil {
					t.Fatal(err)
				}
			}
			stop = consumeAll(t, ctx, bus, inbox, svc)
			defer stop()
			for _, source := range []string{"identity", "tenant"} {
				testkit.Eventually(t, source+" replayed every event", func() bool {
					cons, err := bus.JS.Consumer(ctx, bus.Stream(source), audit.Durable(source))
					if err != nil {
						return false
					}
					info, err := cons.Info(ctx)
					return err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.AckFloor.Stream > 0
				})
			}
			if got := listed(); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the replay audited %+v\nwant %+v", got, want)
			}
		})
	}
}
