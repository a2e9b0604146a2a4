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
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/billing/internal/adapters/identity"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/adapters/postgres"
	"github.com/berthhq/berth/services/billing/internal/adapters/pspx"
	"github.com/berthhq/berth/services/billing/internal/adapters/pspy"
	"github.com/berthhq/berth/services/billing/internal/adapters/rewards"
	"github.com/berthhq/berth/services/billing/internal/adapters/tenant"
	"github.com/berthhq/berth/services/billing/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Config configures the service.
type Config struct {
	// Common holds what every module is built from; DatabaseURL "" selects memory stores (the
	// embedded development default only).
	module.Common
	SecretKey []byte // 32-byte AES-GCM key sealing provider secrets
	// Identity and Tenant are the connections to those services; their calls must carry the
	// service token (user lookups and billing-state commands are service-only methods).
	Identity grpc.ClientConnInterface
	Tenant   grpc.ClientConnInterface
	// PublicURL is the REST edge's public base URL.
	PublicURL string
	// Pspx and Pspy are the provider clients' settings (base URLs; retries default).
	Pspx pspx.Config
	Pspy pspy.Config
}

// Module is the billing context in the service template. It dials identity (credentials, users)
// and tenant (which shows the billing state billing decides).
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9104", Build: build, Migrate: postgres.Migrate,
	Settings: []config.Setting{
		sealbox.KeySetting,
		publicURL,
		{Name: "BERTH_PSPX_URL", Kind: config.URL, Required: true, Doc: "pspx's API base URL (the all-in-one points it at its sandbox)"},
		{Name: "BERTH_PSPY_URL", Kind: config.URL, Required: true, Doc: "pspy's API base URL (likewise)"},
	},
	Peers: []string{"identity", "tenant"}}

// publicURL is required here: payment pages and pspy's webhook URLs are built from it.
var publicURL = func() config.Setting {
	s := module.PublicURLSetting
	s.Required, s.Doc = true, "the REST edge's public base URL: payment pages and pspy's webhook URLs"
	return s
}()

const name = "billing"

func build(ctx context.Context, c module.Common) (*module.Process, error) {
	identityConn, err := c.Dial("identity")
	if err != nil {
		return nil, err
	}
	tenantConn, err := c.Dial("tenant")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{Common: c, SecretKey: c.Settings.Bytes(sealbox.KeySetting.Name), Identity: identityConn, Tenant: tenantConn,
		PublicURL: c.Settings.String(publicURL.Name),
		Pspx:      pspx.Config{BaseURL: c.Settings.String("BERTH_PSPX_URL")}, Pspy: pspy.Config{BaseURL: c.Settings.String("BERTH_PSPY_URL")}})
}

// New opens the store (migrating Postgres) and builds the process: the gRPC server and the outbox
// relay, and the consumer that grants referral rewards.
func New(ctx context.Context, cfg Config) (*module.Process, error) {
	if cfg.Identity == nil || cfg.Tenant == nil {
		return nil, errors.New("billing: identity and tenant connections are required")
	}
	box, err := sealbox.New(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("billing: BERTH_SECRET_KEY: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var (
		store  app.Store
		outbox events.OutboxSource
		inbox  events.Inbox
		pool   *pgxpool.Pool
	)
	if cfg.DatabaseURL == "" {
		mem := &events.MemoryOutbox{}
		store, outbox, inbox = memory.New(mem), mem, events.NewMemoryInbox()
	} else {
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("billing: database: %w", err)
		}
		store, outbox, inbox = postgres.New(pool), events.NewPGOutbox(pool), events.NewPGInbox(pool)
	}

	// Provider secrets sealed under another key would fail every checkout; refuse to start instead.
	if err := pgxx.CheckKeys(ctx, pgxx.KeyChecks(pool), pgxx.KeyCheck{Setting: sealbox.KeySetting.Name, Key: cfg.SecretKey, Was: sealbox.SealedWith}); err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}

	creds := authn.NewRemote(cfg.Identity)
	svc, err := app.New(app.Config{
		Store:     store,
		Users:     identity.NewUsers(identityv1.NewIdentityInternalServiceClient(cfg.Identity)),
		Tenants:   tenant.NewTenants(tenantv1.NewTenantInternalServiceClient(cfg.Tenant)),
		Pspx:      pspx.New(cfg.Pspx),
		Pspy:      pspy.New(cfg.Pspy),
		Box:       box,
		Clock:     cfg.Clock,
		NewID:     uuid.NewString,
		PublicURL: cfg.PublicURL,
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
	p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
		return rewards.Consume(ctx, cfg.Bus, inbox, svc, cfg.Log)
	})
	return p, nil
}
