// Package server is the tenant service's composition root, used by cmd/tenant and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), wires the use cases to the identity service, builds the gRPC server with the shared
// access policy, and runs the outbox relay and the consumer of identity's events.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/pgxx"
	grpcadapter "github.com/berthhq/berth/services/tenant/internal/adapters/grpc"
	"github.com/berthhq/berth/services/tenant/internal/adapters/identity"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/adapters/postgres"
	"github.com/berthhq/berth/services/tenant/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Config configures the service.
type Config struct {
	DatabaseURL string // "" = memory stores (embedded development default only)
	Bus         events.Bus
	// Identity is the connection to the identity service. Its calls must carry the service token
	// (grpcx.Dial or grpcx.ServiceTokenInterceptor): key and token verification and user lists are
	// service-only methods.
	Identity     grpc.ClientConnInterface
	AdminToken   string
	ServiceToken string
	Log          *slog.Logger
	Clock        func() time.Time
}

// Service is a running tenant service.
type Service struct {
	cfg    Config
	pool   *pgxpool.Pool // nil with memory stores
	outbox events.OutboxSource
	inbox  events.Inbox // kept with the store, so a consumed event commits with its effect
	svc    *app.Service
	creds  authn.Remote
	grpc   *grpc.Server
	relay  *events.Relay
}

// New opens the store (migrating Postgres) and builds the gRPC server.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Identity == nil {
		return nil, errors.New("tenant: an identity connection is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s := &Service{cfg: cfg}
	var repo app.Repository
	if cfg.DatabaseURL == "" {
		outbox := &events.MemoryOutbox{}
		repo, s.outbox, s.inbox = memory.New(outbox), outbox, events.NewMemoryInbox()
	} else {
		pool, err := pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate)
		if err != nil {
			return nil, fmt.Errorf("tenant: database: %w", err)
		}
		s.pool = pool
		repo, s.outbox, s.inbox = postgres.New(pool), events.NewPGOutbox(pool), events.NewPGInbox(pool)
	}
	s.relay = events.NewRelay(s.outbox, cfg.Bus, cfg.Log)

	identityClient := identityv1.NewIdentityInternalServiceClient(cfg.Identity)
	s.creds = authn.NewRemote(cfg.Identity)
	s.svc = app.New(repo, identity.NewDirectory(identityClient), app.Options{
		Clock:    cfg.Clock,
		NewID:    uuid.NewString,
		OnCommit: s.relay.Notify,
	})
	s.grpc = grpcx.NewServer(grpcx.ServerOptions{
		Log:    cfg.Log,
		Policy: s.creds.Policy(cfg.AdminToken, cfg.ServiceToken),
	})
	grpcadapter.Register(s.grpc, s.svc)
	return s, nil
}

// GRPC is the server to serve on a listener.
func (s *Service) GRPC() *grpc.Server { return s.grpc }

// Run, until ctx ends, relays outbox events to JetStream, evicts cached API keys and access tokens
// on identity's key, app and user events, and applies identity's user deletions to tenants.
func (s *Service) Run(ctx context.Context) error {
	if s.cfg.Bus.JS == nil {
		return errors.New("tenant: Run needs a JetStream bus")
	}
	stopWatch, err := s.creds.Watch(ctx, s.cfg.Bus)
	if err != nil {
		return fmt.Errorf("tenant: watch key and token changes: %w", err)
	}
	defer stopWatch()
	stopConsumer, err := identity.ConsumeUserEvents(ctx, s.cfg.Bus, s.inbox, s.svc, s.cfg.Log)
	if err != nil {
		return fmt.Errorf("tenant: consume identity events: %w", err)
	}
	defer stopConsumer()
	return s.relay.Run(ctx)
}

// Close releases the database pool. Stop serving (GRPC().GracefulStop) first.
func (s *Service) Close() {
	if s.pool != nil {
		s.pool.Close()
	}
}
