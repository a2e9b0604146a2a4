package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/tenant/internal/adapters/billing"
	"github.com/berthhq/berth/services/tenant/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/tenant/internal/adapters/identity"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/adapters/postgres"
	"github.com/berthhq/berth/services/tenant/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Config configures the service.
type Config struct {
	// Common holds what every module is built from; DatabaseURL "" selects memory stores (the
	// embedded development default only).
	module.Common
	// Identity is the connection to the identity service. Its calls must carry the service token
	// (grpcx.Dial or grpcx.ServiceTokenInterceptor): key and token verification and user lists are
	// service-only methods.
	Identity grpc.ClientConnInterface
}

// Module is the tenant context in the service template. It dials the identity module, which
// verifies API keys and tokens and lists a tenant's users.
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9102", Build: build, Migrate: postgres.Migrate, Peers: []string{"identity"}}

const name = "tenant"

func build(ctx context.Context, c module.Common) (*module.Process, error) {
	identity, err := c.Dial("identity")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{Common: c, Identity: identity})
}

// New opens the store (migrating Postgres) and builds the process: the gRPC server, the outbox
// relay, the eviction of cached credentials on identity's events, and the consumer that applies
// identity's user deletions to tenants.
func New(ctx context.Context, cfg Config) (*module.Process, error) {
	if cfg.Identity == nil {
		return nil, errors.New("tenant: an identity connection is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var (
		store  app.Store
		outbox events.OutboxSource
		inbox  events.Inbox // kept with the store, so a consumed event commits with its effect
		pool   *pgxpool.Pool
	)
	if cfg.DatabaseURL == "" {
		mem := &events.MemoryOutbox{}
		store, outbox, inbox = memory.New(mem), mem, events.NewMemoryInbox()
	} else {
		var err error
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("tenant: database: %w", err)
		}
		store, outbox, inbox = postgres.New(pool), events.NewPGOutbox(pool), events.NewPGInbox(pool)
	}

	creds := authn.NewRemote(cfg.Identity)
	svc, err := app.New(app.Config{
		Store: store, Users: identity.NewDirectory(identityv1.NewIdentityInternalServiceClient(cfg.Identity)),
		Clock: cfg.Clock, NewID: uuid.NewString,
	})
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	p, err := module.NewProcess(cfg.Common, name, creds.Policy(cfg.AdminToken, cfg.ServiceToken))
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	if pool != nil {
		p.UsePool(pool)
	}
	grpcapi.Register(p, svc)
	p.Relay = events.NewRelay(name, outbox, cfg.Bus, cfg.Log)
	p.Watches = append(p.Watches, func(ctx context.Context) (func(), error) { return creds.Watch(ctx, cfg.Bus) })
	p.Consumers = append(p.Consumers,
		func(ctx context.Context) (*events.Consumer, error) {
			return identity.ConsumeUserEvents(ctx, cfg.Bus, inbox, svc, cfg.Log)
		},
		func(ctx context.Context) (*events.Consumer, error) {
			return billing.ConsumeTenantState(ctx, cfg.Bus, inbox, svc, cfg.Log)
		})
	return p, nil
}
