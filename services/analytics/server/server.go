// Package server is the analytics service's composition root, used by cmd/analytics and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), builds the gRPC server with the shared access policy, and in Run feeds identity's and
// tenant's events into the read models.
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
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/pgxx"
	grpcadapter "github.com/berthhq/berth/services/analytics/internal/adapters/grpc"
	"github.com/berthhq/berth/services/analytics/internal/adapters/identity"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/adapters/tenant"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Config configures the service.
type Config struct {
	DatabaseURL string // "" = memory store and inbox (embedded development default only)
	Bus         events.Bus
	// Identity is the connection to the identity service. Its calls must carry the service token
	// (grpcx.Dial or grpcx.ServiceTokenInterceptor): key verification is a service-only method.
	Identity     grpc.ClientConnInterface
	AdminToken   string
	ServiceToken string
	Log          *slog.Logger
	Clock        func() time.Time // time.Now when nil; dates the age of sign-ins
}

// Service is a running analytics service.
type Service struct {
	cfg       Config
	pool      *pgxpool.Pool // nil with the memory store
	inbox     events.Inbox
	projector *app.Projector
	creds     authn.Remote
	grpc      *grpc.Server
}

// New opens the store (migrating Postgres) and builds the gRPC server.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Identity == nil {
		return nil, errors.New("analytics: an identity connection is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s := &Service{cfg: cfg}
	var store app.Store
	if cfg.DatabaseURL == "" {
		store, s.inbox = memory.New(), events.NewMemoryInbox()
	} else {
		pool, err := pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate)
		if err != nil {
			return nil, fmt.Errorf("analytics: database: %w", err)
		}
		s.pool = pool
		store, s.inbox = postgres.New(pool), events.NewPGInbox(pool)
	}
	s.projector = app.NewProjector(store)

	s.creds = authn.NewRemote(cfg.Identity)
	s.grpc = grpcx.NewServer(grpcx.ServerOptions{
		Log:    cfg.Log,
		Policy: s.creds.Policy(cfg.AdminToken, cfg.ServiceToken),
	})
	grpcadapter.Register(s.grpc, app.NewService(store, cfg.Clock))
	return s, nil
}

// GRPC is the server to serve on a listener.
func (s *Service) GRPC() *grpc.Server { return s.grpc }

// Run consumes identity's and tenant's events into the read models and evicts cached API keys on
// identity's key and app events, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	if s.cfg.Bus.JS == nil {
		return errors.New("analytics: Run needs a JetStream bus")
	}
	stopWatch, err := s.creds.Watch(ctx, s.cfg.Bus)
	if err != nil {
		return fmt.Errorf("analytics: watch key changes: %w", err)
	}
	defer stopWatch()
	for _, consume := range []func(context.Context, events.Bus, events.Inbox, *app.Projector, *slog.Logger) (func(), error){identity.Consume, tenant.Consume} {
		stop, err := consume(ctx, s.cfg.Bus, s.inbox, s.projector, s.cfg.Log)
		if err != nil {
			return fmt.Errorf("analytics: start consumers: %w", err)
		}
		defer stop()
	}
	<-ctx.Done()
	return nil
}

// Close releases the database pool. Stop serving (GRPC().GracefulStop) and Run first.
func (s *Service) Close() {
	if s.pool != nil {
		s.pool.Close()
	}
}
