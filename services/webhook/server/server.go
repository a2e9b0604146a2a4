package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/webhook/internal/adapters/billing"
	"github.com/berthhq/berth/services/webhook/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/webhook/internal/adapters/memory"
	"github.com/berthhq/berth/services/webhook/internal/adapters/postgres"
	"github.com/berthhq/berth/services/webhook/internal/app"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// Config configures the service.
type Config struct {
	// Common holds what every module is built from; DatabaseURL "" selects the memory store (the
	// embedded development default only).
	module.Common
	// Billing is the connection to billing; its calls must carry the service token.
	Billing grpc.ClientConnInterface
	// Identity is the connection to identity, which verifies project members' operator tokens
	// and names an app's project; its calls must carry the service token.
	Identity grpc.ClientConnInterface
	// PublicURL is the REST edge's public base URL.
	PublicURL string
}

// Module is the webhook-ingest context in the service template. It dials billing, and identity
// for the operator tokens of the console's events page.
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9105", Build: build, Migrate: postgres.Migrate,
	Settings: []config.Setting{publicURL}, Peers: []string{"billing", "identity"}}

// publicURL is required here: its host tells this deployment's provider objects from another's.
var publicURL = func() config.Setting {
	s := module.PublicURLSetting
	s.Required, s.Doc = true, "the REST edge's public base URL; its host tells this deployment's provider objects from another's"
	return s
}()

const name = "webhook"

func build(ctx context.Context, c module.Common) (*module.Process, error) {
	conn, err := c.Dial("billing")
	if err != nil {
		return nil, err
	}
	identity, err := c.Dial("identity")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{Common: c, Billing: conn, Identity: identity, PublicURL: c.Settings.String(publicURL.Name)})
}

// New opens the store (migrating Postgres) and builds the process.
func New(ctx context.Context, cfg Config) (*module.Process, error) {
	if cfg.Billing == nil {
		return nil, errors.New("webhook: a billing connection is required")
	}
	if cfg.Identity == nil {
		return nil, errors.New("webhook: an identity connection is required")
	}
	public, err := url.Parse(cfg.PublicURL)
	if err != nil || public.Host == "" {
		return nil, fmt.Errorf("webhook: BERTH_PUBLIC_URL %q is not an absolute URL", cfg.PublicURL)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var (
		store app.Store
		pool  *pgxpool.Pool
	)
	if cfg.DatabaseURL == "" {
		store = memory.New()
	} else {
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("webhook: database: %w", err)
		}
		store = postgres.New(pool)
	}
	svc, err := app.New(app.Config{Store: store, Billing: billing.New(billingv1.NewProviderEventServiceClient(cfg.Billing)),
		Host: public.Host, Clock: cfg.Clock, NewID: uuid.NewString})
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	// Routes 3 and 4 are public (the signature or the provider fetch authenticates them); the
	// operators' calls need the admin token or a project member's operator token naming an app of
	// their project. No API keys or tenant tokens are accepted here.
	creds := authn.NewRemote(cfg.Identity)
	p, err := module.NewProcess(cfg.Common, name, authn.Policy{Operators: creds.Operators, Apps: creds.Apps,
		AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken})
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
	return p, nil
}
