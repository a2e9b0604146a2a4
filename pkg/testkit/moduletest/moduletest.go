// Package moduletest runs one module of the service template in process for a test, exactly as
// the production binary would build it (module.Module.Build from module.Common), on memory stores
// or on a fresh Postgres database of its own, with a private JetStream bus. A service's server test
// needs nothing else: Start hands back a connection to the module's gRPC server and its bus.
package moduletest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

// Options say how to run the module.
type Options struct {
	Postgres bool // a fresh database of its own (pgtest); false: memory stores
	// Peers are the other modules it dials (module.Common.Dial), by name: usually fakes served
	// with grpctest.Serve.
	Peers        map[string]grpc.ClientConnInterface
	Env          map[string]string // the module's own settings
	AdminToken   string
	ServiceToken string
	Clock        func() time.Time // nil = time.Now
}

// Running is a module under test.
type Running struct {
	Conn    *grpc.ClientConn // to the module's gRPC server, with no credentials of its own
	Bus     events.Bus
	Process *module.Process
}

// Start builds m, serves it and runs its background work (relay, watches, consumers) until the
// test ends.
func Start(t testing.TB, m module.Module, o Options) Running {
	t.Helper()
	bus, _ := natstest.New(t)
	settings, err := config.Parse(func(name string) string { return o.Env[name] }, m.Settings)
	if err != nil {
		t.Fatalf("%s's settings: %v", m.Name, err)
	}
	c := module.Common{
		Bus: bus, AdminToken: o.AdminToken, ServiceToken: o.ServiceToken, Clock: o.Clock,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Settings: settings,
		Dial: func(name string) (grpc.ClientConnInterface, error) {
			if conn, ok := o.Peers[name]; ok {
				return conn, nil
			}
			return nil, fmt.Errorf("moduletest: %s dials %s, which the test gave no connection for", m.Name, name)
		},
	}
	if o.Postgres {
		// The module migrates its database itself, as in production.
		c.DatabaseURL = pgtest.URL(t, "module-"+m.Name, func(context.Context, *pgxpool.Pool) error { return nil })
	}
	ctx, cancel := context.WithCancel(context.Background())
	proc, err := m.Build(ctx, c)
	if err != nil {
		cancel()
		t.Fatalf("build %s: %v", m.Name, err)
	}
	conn := grpctest.Serve(t, proc.GRPC())
	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: Run: %v", m.Name, err)
		}
		proc.Close()
	})
	return Running{Conn: conn, Bus: bus, Process: proc}
}

// Stores runs test as two subtests, on memory stores and on Postgres, which is how every module's
// server test proves that both store kinds behave alike behind the same API.
func Stores(t *testing.T, test func(t *testing.T, postgres bool)) {
	t.Helper()
	for _, postgres := range []bool{false, true} {
		name := "memory"
		if postgres {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { test(t, postgres) })
	}
}
