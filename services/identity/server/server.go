// Package server is the identity service's composition root: it picks the stores (PostgreSQL, or
// memory for the embedded development stack), wires the use cases, the gRPC server with the access
// policy, and the outbox relay. cmd/identity and the all-in-one process both build the service here.
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
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/pgxx"
	grpcadapter "github.com/berthhq/berth/services/identity/internal/adapters/grpc"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/adapters/postgres"
	tenantclient "github.com/berthhq/berth/services/identity/internal/adapters/tenant"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
	"github.com/berthhq/berth/services/identity/internal/domain/sealbox"
)

// Config configures the identity service.
type Config struct {
	DatabaseURL  string     // "" = memory stores (the embedded dev default only)
	Bus          events.Bus // JetStream; the relay publishes the outbox here
	Pepper       []byte     // API-key HMAC pepper
	SecretKey    []byte     // 32-byte AES-GCM key protecting app private keys at rest
	AdminToken   string
	ServiceToken string
	Log          *slog.Logger
	Clock        func() time.Time // nil = time.Now
	// Issuer is the iss claim of issued tokens (BERTH_ISSUER; "" = app.DefaultIssuer). Clients
	// compare it with the issuer id they are configured with.
	Issuer string
	// PublicURL is the REST edge's public base URL, for the discovery document's endpoints.
	PublicURL string
	// Tenant reaches the tenant service for sign-up; its calls must carry the service token. nil
	// leaves everything working except sign-up, which answers Unavailable.
	Tenant grpc.ClientConnInterface
	// Passwords are the argon2id costs of new password hashes (zero = the production default).
	Passwords password.Params
	// Mailer sends referral invites (route 23); nil leaves them answering Unavailable.
	Mailer mail.Sender
}

// Service is a built identity service.
type Service struct {
	grpc  *grpc.Server
	relay *events.Relay
	bus   events.Bus
	pool  *pgxpool.Pool // nil with memory stores
}

// New builds the service. With a DatabaseURL it connects and applies the identity and events
// migrations before anything is served.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if len(cfg.Pepper) == 0 {
		return nil, errors.New("identity: an API-key pepper is required")
	}
	box, err := sealbox.New(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("identity: secret key: %w", err)
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}

	s := &Service{bus: cfg.Bus}
	var (
		store  app.Store
		outbox events.OutboxSource
	)
	if cfg.DatabaseURL != "" {
		if s.pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("identity: database: %w", err)
		}
		store, outbox = postgres.New(s.pool), events.NewPGOutbox(s.pool)
	} else {
		mem := &events.MemoryOutbox{}
		store, outbox = memory.New(mem), mem
	}

	var tenants app.Tenants
	if cfg.Tenant != nil {
		tenants = tenantclient.New(cfg.Tenant)
	}
	svc, err := app.New(app.Config{
		Store: store, Pepper: cfg.Pepper, Box: box, Clock: cfg.Clock, Tenants: tenants,
		Issuer: cfg.Issuer, PublicURL: cfg.PublicURL, Passwords: cfg.Passwords, Mailer: cfg.Mailer,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	s.grpc = grpcx.NewServer(grpcx.ServerOptions{
		Log: log,
		// Identity verifies keys and tokens itself, without a cache: it is the source the other
		// services' caches ask.
		Policy: authn.Policy{Keys: svc, Tokens: svc, Operators: svc, AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken},
	})
	grpcadapter.Register(s.grpc, svc)
	s.relay = events.NewRelay(outbox, cfg.Bus, log.With("component", "identity-relay"))
	return s, nil
}

// GRPC is the server with the identity, internal and admin APIs (and gRPC health) registered. The
// caller serves it on its listener and stops it.
func (s *Service) GRPC() *grpc.Server { return s.grpc }

// Run publishes the outbox to the bus until ctx ends. It makes sure the streams exist first, so a
// fresh NATS deployment works without a separate setup step.
func (s *Service) Run(ctx context.Context) error {
	if s.bus.JS == nil {
		return errors.New("identity: no event bus configured")
	}
	if err := s.bus.EnsureStreams(ctx); err != nil {
		return fmt.Errorf("identity: streams: %w", err)
	}
	return s.relay.Run(ctx)
}

// Close stops the gRPC server (use GRPC().GracefulStop first to drain calls) and releases the
// database pool.
func (s *Service) Close() {
	if s.grpc != nil {
		s.grpc.Stop()
	}
	if s.pool != nil {
		s.pool.Close()
	}
}
