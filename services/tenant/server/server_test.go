package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/tenant/internal/adapters/postgres"
	"github.com/berthhq/berth/services/tenant/server"

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

func TestCreatedTenantReachesJetStream(t *testing.T) {
	stores := []struct {
		name        string
		databaseURL func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return connString(t, pgtest.New(t, "tenant-server", postgres.Migrate)) }},
	}
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			bus, _ := natstest.New(t)
			svc, err := server.New(ctx, server.Config{
				DatabaseURL: store.databaseURL(t),
				Bus:         bus,
				Identity:    unusedIdentity(t),
				AdminToken:  adminToken,
				Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(svc.Close)

			got := make(chan events.Event, 1)
			stop, err := bus.Subscribe(ctx, []string{"tenant.tenant.created"}, func(ev events.Event) { got <- ev })
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			runDone := make(chan error, 1)
			go func() { runDone <- svc.Run(ctx) }()

			admin := tenantv1.NewTenantAdminServiceClient(dial(t, svc.GRPC()))
			appID := uuid.NewString()
			callCtx := metadata.AppendToOutgoingContext(ctx, authn.MDAdminToken, adminToken)
			tn, err := admin.CreateTenant(callCtx, &tenantv1.CreateTenantRequest{AppId: appID, Name: "Acme"})
			if err != nil {
				t.Fatal(err)
			}

			select {
			case ev := <-got:
				var payload tenantv1.TenantChanged
				if err := ev.Decode(&payload); err != nil {
					t.Fatal(err)
				}
				if ev.AppID != appID || payload.GetTenantId() != tn.GetId() || payload.GetTenant().GetName() != "Acme" {
					t.Fatalf("event %+v with payload %v", ev, &payload)
				}
			case <-time.After(15 * time.Second): // a bound on a hang, not a latency requirement
				t.Fatal("tenant.tenant.created was not published")
			}
			cancel()
			if err := <-runDone; err != nil {
				t.Fatalf("Run: %v", err)
			}
		})
	}
}

// connString names the test's own database. The pool's original ConnString would name the server's
// shared database that pgtest clones from, so the DSN is rebuilt from the pool's effective config.
func connString(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	cc := pool.Config().ConnConfig
	if cc.Database == "" || cc.Database == "postgres" {
		t.Fatalf("pgtest pool is on database %q, not a per-test database", cc.Database)
	}
	dsn := fmt.Sprintf("host='%s' port=%d user='%s' dbname='%s' sslmode=disable", cc.Host, cc.Port, cc.User, cc.Database)
	if cc.Password != "" {
		dsn += fmt.Sprintf(" password='%s'", cc.Password)
	}
	return dsn
}

func dial(t *testing.T, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
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
