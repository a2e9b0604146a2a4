package module_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// running builds a process with a database and one durable consumer and runs it until the test ends.
func running(t *testing.T) (*module.Process, *pgxpool.Pool, events.Bus) {
	t.Helper()
	bus, _ := natstest.New(t)
	pool := pgtest.New(t, "module-process", func(context.Context, *pgxpool.Pool) error { return nil })
	p, err := module.NewProcess(module.Common{Bus: bus, Log: quiet}, "probe", authn.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	p.Pool = pool // UsePool would also close it; pgtest closes it at the end of the test
	p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
		return bus.Consume(ctx, events.ConsumerConfig{Durable: "probe", Types: []eventsv1.Type{tenantv1.EventTenantCreated}, Inbox: events.NewMemoryInbox(),
			Handler: func(context.Context, events.Event) error { return nil }})
	})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = p.Run(ctx) // a test that cares how Run ends (a lost consumer) asks the process itself
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	return p, pool, bus
}

// healthOf serves p in process and asks its gRPC health service.
func healthOf(t *testing.T, p *module.Process) func() healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	client := healthpb.NewHealthClient(grpctest.Serve(t, p.GRPC()))
	return func() healthpb.HealthCheckResponse_ServingStatus {
		res, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			return healthpb.HealthCheckResponse_UNKNOWN
		}
		return res.GetStatus()
	}
}

func TestReadinessFollowsTheDatabaseGoingAwayAndComingBack(t *testing.T) {
	p, pool, _ := running(t)
	status := healthOf(t, p)
	ctx := context.Background()
	testkit.Eventually(t, "ready with the database up and the consumer running", func() bool { return p.Ready(ctx) == nil })
	testkit.Eventually(t, "gRPC health SERVING", func() bool { return status() == healthpb.HealthCheckResponse_SERVING })

	// "Stop" the database for this process: refuse new connections and end the open ones.
	admin := adminConn(t, pool)
	db := pool.Config().ConnConfig.Database
	exec(t, admin, "alter database "+pgx.Identifier{db}.Sanitize()+" allow_connections false")
	exec(t, admin, "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", db)
	testkit.Eventually(t, "not ready while the database refuses connections", func() bool { return p.Ready(ctx) != nil })
	testkit.Eventually(t, "gRPC health NOT_SERVING", func() bool { return status() == healthpb.HealthCheckResponse_NOT_SERVING })

	exec(t, admin, "alter database "+pgx.Identifier{db}.Sanitize()+" allow_connections true")
	testkit.Eventually(t, "ready again once the database is back, without a restart", func() bool { return p.Ready(ctx) == nil })
	testkit.Eventually(t, "gRPC health SERVING again", func() bool { return status() == healthpb.HealthCheckResponse_SERVING })
}

func TestReadinessTurnsFalseWhenAConsumersDurableIsDeleted(t *testing.T) {
	p, _, bus := running(t)
	ctx := context.Background()
	testkit.Eventually(t, "ready", func() bool { return p.Ready(ctx) == nil })
	if err := bus.JS.DeleteConsumer(ctx, bus.Stream("tenant"), "probe"); err != nil {
		t.Fatal(err)
	}
	if err := p.Ready(ctx); err == nil {
		t.Fatal("ready after the durable was deleted")
	}
}

func TestAProcessIsNotReadyBeforeRunStartsItsConsumers(t *testing.T) {
	p, err := module.NewProcess(module.Common{Log: quiet}, "probe", authn.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	p.Consumers = append(p.Consumers, func(context.Context) (*events.Consumer, error) { return nil, nil })
	if err := p.Ready(context.Background()); err == nil {
		t.Fatal("ready before its consumers run")
	}
}

func adminConn(t *testing.T, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	cfg := pool.Config().ConnConfig.Copy()
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
