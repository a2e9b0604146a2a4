package server_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/tenant/internal/adapters/postgres"
	"github.com/berthhq/berth/services/tenant/server"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const adminToken = "admin-token-for-tests"

// unusedIdentity is a connection that is never dialled: provisioning calls need no identity.
func unusedIdentity(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///identity.invalid:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// stores are the two ways the service keeps its state.
var stores = []struct {
	name        string
	databaseURL func(t *testing.T) string
}{
	{"memory", func(*testing.T) string { return "" }},
	{"postgres", func(t *testing.T) string { return pgtest.URL(t, "tenant-server", postgres.Migrate) }},
}

// running is a service started with Run on a test bus, and an admin client of it.
type running struct {
	bus   events.Bus
	admin tenantv1.TenantAdminServiceClient
}

// start builds the service on the store and runs it until the test ends; the test fails if Run
// returns an error.
func start(t *testing.T, databaseURL string) running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bus, _ := natstest.New(t)
	svc, err := server.New(ctx, server.Config{
		Common:   module.Common{DatabaseURL: databaseURL, Bus: bus, AdminToken: adminToken, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Identity: unusedIdentity(t),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	runDone := make(chan error, 1)
	go func() { runDone <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return running{bus: bus, admin: tenantv1.NewTenantAdminServiceClient(grpctest.Serve(t, svc.GRPC()))}
}

func (r running) createTenant(t *testing.T, appID string) *tenantv1.Tenant {
	t.Helper()
	ctx := metadata.AppendToOutgoingContext(context.Background(), authn.MDAdminToken, adminToken)
	tn, err := r.admin.CreateTenant(ctx, &tenantv1.CreateTenantRequest{AppId: appID, Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// next returns the next event of the subscription, or fails the test when none comes.
func next(t *testing.T, got <-chan events.Event, what eventsv1.Type) events.Event {
	t.Helper()
	select {
	case ev := <-got:
		return ev
	case <-time.After(15 * time.Second): // a bound on a hang, not a latency requirement
		t.Fatalf("%s was not published", what)
		return events.Event{}
	}
}

func subscribe(t *testing.T, bus events.Bus, eventType eventsv1.Type) <-chan events.Event {
	t.Helper()
	got := make(chan events.Event, 1)
	stop, err := bus.Subscribe(context.Background(), []eventsv1.Type{eventType}, func(ev events.Event) { got <- ev })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return got
}

func TestCreatedTenantReachesJetStream(t *testing.T) {
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			r := start(t, store.databaseURL(t))
			got := subscribe(t, r.bus, tenantv1.EventTenantCreated)
			appID := uuid.NewString()
			tn := r.createTenant(t, appID)

			ev := next(t, got, tenantv1.EventTenantCreated)
			var payload tenantv1.TenantChanged
			if err := ev.Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if ev.AppID != appID || payload.GetTenantId() != tn.GetId() || payload.GetTenant().GetName() != "Acme" {
				t.Fatalf("event %+v with payload %v", ev, &payload)
			}
		})
	}
}

// Run consumes identity's user.deleted: the last user's tenant is retired and the change is
// published like any other tenant update.
func TestDeletedLastUserRetiresTheTenant(t *testing.T) {
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			r := start(t, store.databaseURL(t))
			got := subscribe(t, r.bus, tenantv1.EventTenantUpdated)
			appID := uuid.NewString()
			tn := r.createTenant(t, appID)

			ev, err := events.New("identity", identityv1.EventUserDeleted, appID, &identityv1.UserDeleted{
				AppId: appID, UserId: uuid.NewString(), TenantRef: tn.GetId(), TenantUsersLeft: 0,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.bus.Publish(context.Background(), ev); err != nil {
				t.Fatal(err)
			}

			upd := next(t, got, tenantv1.EventTenantUpdated)
			var payload tenantv1.TenantChanged
			if err := upd.Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if payload.GetTenantId() != tn.GetId() || !payload.GetTenant().GetDeleted() ||
				!slices.Equal(payload.GetChangedFields(), []string{"deleted"}) {
				t.Fatalf("update payload %v", &payload)
			}
		})
	}
}

func TestConfigurationErrors(t *testing.T) {
	if _, err := server.New(context.Background(), server.Config{}); err == nil {
		t.Fatal("New without an identity connection succeeded")
	}
	svc, err := server.New(context.Background(), server.Config{Identity: unusedIdentity(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Run(context.Background()); err == nil {
		t.Fatal("Run without a bus succeeded")
	}
}
