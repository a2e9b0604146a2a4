package svcmain

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func setup(t *testing.T) *slog.Logger {
	t.Helper()
	nats, err := natsx.StartEmbedded("", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Close)
	t.Setenv("BERTH_NATS_URL", nats.Server.ClientURL())
	t.Setenv("BERTH_DATABASE_URL", "postgres://unused")
	t.Setenv("BERTH_GRPC_ADDR", "127.0.0.1:0")
	t.Setenv("BERTH_OPS_ADDR", "127.0.0.1:0")
	t.Setenv("BERTH_SERVICE_TOKEN", "svc")
	return slog.New(slog.NewJSONHandler(io.Discard, nil))
}

// start parses m's settings from the test's environment, as Main does, and runs it.
func start(log *slog.Logger, m module.Module) error {
	settings, err := config.Parse(config.OS, Settings, ModuleSettings(m), m.Settings)
	if err != nil {
		return err
	}
	return run(context.Background(), log, m, settings)
}

// consumingModule builds a process with one durable consumer and hands its bus to the test.
func consumingModule(buses chan<- events.Bus) module.Module {
	return module.Module{Name: "probe", DefaultAddr: "127.0.0.1:0", Peers: []string{"peer"}, Build: func(_ context.Context, c module.Common) (*module.Process, error) {
		if _, err := c.Dial("peer"); err != nil {
			return nil, err
		}
		p, err := module.NewProcess(c, "probe", authn.Policy{})
		if err != nil {
			return nil, err
		}
		p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
			return c.Bus.Consume(ctx, events.ConsumerConfig{Durable: "probe", Types: []eventsv1.Type{tenantv1.EventTenantCreated}, Inbox: events.NewMemoryInbox(),
				Handler: func(context.Context, events.Event) error { return nil }})
		})
		buses <- c.Bus
		return p, nil
	}}
}

func TestProcessStopsWithAnErrorWhenItsConsumerIsLost(t *testing.T) {
	log := setup(t)
	t.Setenv("BERTH_PEER_ADDR", "127.0.0.1:1")
	buses := make(chan events.Bus, 1)
	done := make(chan error, 1)
	go func() { done <- start(log, consumingModule(buses)) }()
	bus := <-buses
	ctx := context.Background()
	// Delete the durable under the running process once Run has created it (deleting it while
	// its creation is under way fails the creation instead: a different error); the process must
	// notice and stop with an error.
	deadline := time.After(30 * time.Second) // a bound on a hang
	for {
		if _, err := bus.JS.Consumer(ctx, bus.Stream("tenant"), "probe"); err == nil {
			_ = bus.JS.DeleteConsumer(ctx, bus.Stream("tenant"), "probe")
		}
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "consumer probe is gone") {
				t.Fatalf("run = %v, want the lost consumer", err)
			}
			return
		case <-deadline:
			t.Fatal("the process kept running without its consumer")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestProcessRefusesToStartWithoutAPeerAddressItNeeds(t *testing.T) {
	log := setup(t)
	err := start(log, consumingModule(make(chan events.Bus, 1)))
	if err == nil || !strings.Contains(err.Error(), "BERTH_PEER_ADDR is required") {
		t.Fatalf("run = %v", err)
	}
}

func TestProcessRefusesToStartWithoutADatabase(t *testing.T) {
	log := setup(t)
	t.Setenv("BERTH_DATABASE_URL", "")
	built := false
	m := module.Module{Name: "probe", Build: func(context.Context, module.Common) (*module.Process, error) { built = true; return nil, nil }}
	if err := start(log, m); err == nil || built {
		t.Fatalf("started without BERTH_DATABASE_URL: err = %v", err)
	}
}

func TestOpsAddressSitsOneHundredPortsAboveGRPC(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1:9101": "127.0.0.1:9201", "0.0.0.0:9103": "0.0.0.0:9203", "127.0.0.1:0": "127.0.0.1:0", "bogus": "127.0.0.1:0"} {
		if got := OpsAddr(in); got != want {
			t.Errorf("OpsAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTheMigrateCommandBringsTheSchemaUpToDateAndStartsNothing(t *testing.T) {
	log := setup(t)
	url := pgtest.URL(t, "svcmain-migrate", func(context.Context, *pgxpool.Pool) error { return nil })
	t.Setenv("BERTH_DATABASE_URL", url)
	built := false
	m := module.Module{Name: "probe",
		Build: func(context.Context, module.Common) (*module.Process, error) { built = true; return nil, nil },
		Migrate: func(ctx context.Context, pool *pgxpool.Pool) error {
			_, err := pool.Exec(ctx, "create table if not exists probe_schema (id int)")
			return err
		}}
	settings, err := config.Parse(config.OS, MigrateSettings)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second run finds nothing to do
		if err := migrate(log, m, settings); err != nil || built {
			t.Fatalf("migrate = %v, built %v", err, built)
		}
	}
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), "select count(*) from probe_schema").Scan(&n); err != nil {
		t.Fatalf("the migration's table: %v", err)
	}
	t.Setenv("BERTH_DATABASE_URL", "")
	if _, err := config.Parse(config.OS, MigrateSettings); err == nil {
		t.Fatal("the migration's settings parse without BERTH_DATABASE_URL")
	}
}
