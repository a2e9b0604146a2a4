package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/analytics/internal/adapters/audit"
	"github.com/berthhq/berth/services/analytics/internal/adapters/billing"
	"github.com/berthhq/berth/services/analytics/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/analytics/internal/adapters/identity"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/adapters/tenant"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Config configures the service.
type Config struct {
	// Common holds what every module is built from; DatabaseURL "" selects memory stores (the
	// embedded development default only).
	module.Common
	// Identity is the connection to the identity service. Its calls must carry the service token
	// (grpcx.Dial or grpcx.ServiceTokenInterceptor): key verification is a service-only method.
	Identity grpc.ClientConnInterface
}

// Module is the analytics context in the service template. It dials the identity module, which
// verifies API keys.
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9103", Build: build, Migrate: postgres.Migrate, Peers: []string{"identity"}}

const name = "analytics"

// auditPruneEvery is how often the audit log drops entries beyond their app's retention: retention
// is counted in days, so an hour late is no later than the setting promises to the day.
const auditPruneEvery = time.Hour

func build(ctx context.Context, c module.Common) (*module.Process, error) {
	identity, err := c.Dial("identity")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{Common: c, Identity: identity})
}

// New opens the store (migrating Postgres) and builds the process: the gRPC server, the eviction
// of cached API keys on identity's events, the consumers that feed identity's, tenant's and
// billing's events into the read models and every context's events into the audit log, and the
// audit log's pruning.
func New(ctx context.Context, cfg Config) (*module.Process, error) {
	if cfg.Identity == nil {
		return nil, errors.New("analytics: an identity connection is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var (
		store app.Store
		inbox events.Inbox
		pool  *pgxpool.Pool
	)
	if cfg.DatabaseURL == "" {
		store, inbox = memory.New(), events.NewMemoryInbox()
	} else {
		var err error
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("analytics: database: %w", err)
		}
		store, inbox = postgres.New(pool), events.NewPGInbox(pool)
	}
	svc, err := app.New(app.Config{Store: store, Events: cfg.Bus, Clock: cfg.Clock})
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	creds := authn.NewRemote(cfg.Identity)
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
	grpcapi.RegisterAdmin(p, svc)
	grpcapi.RegisterSeries(p, svc)
	p.Watches = append(p.Watches, func(ctx context.Context) (func(), error) { return creds.Watch(ctx, cfg.Bus) })
	for _, source := range events.Contexts() {
		p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
			return audit.Consume(ctx, cfg.Bus, inbox, svc, source, cfg.Log)
		})
	}
	p.Watches = append(p.Watches, func(ctx context.Context) (func(), error) {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			svc.RunAuditPruning(ctx, auditPruneEvery, cfg.Log)
		}()
		return func() { cancel(); <-done }, nil
	})
	for _, consume := range []func(context.Context, events.Bus, events.Inbox, *app.Service, *slog.Logger) (*events.Consumer, error){identity.Consume, tenant.Consume, billing.Consume} {
		p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
			return consume(ctx, cfg.Bus, inbox, svc, cfg.Log)
		})
	}
	return p, nil
}
