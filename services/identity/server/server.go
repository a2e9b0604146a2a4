package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/authn/apikey"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/identity/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/adapters/oidc"
	"github.com/berthhq/berth/services/identity/internal/adapters/outbound"
	"github.com/berthhq/berth/services/identity/internal/adapters/postgres"
	tenantclient "github.com/berthhq/berth/services/identity/internal/adapters/tenant"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// Config configures the identity service.
type Config struct {
	// Common holds what every module is built from; DatabaseURL "" selects memory stores (the
	// embedded dev default only). Dial, Env and Mailer are Build's: New takes their results below.
	module.Common
	Pepper    []byte // API-key HMAC pepper
	SecretKey []byte // 32-byte AES-GCM key protecting app private keys at rest
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
	// Mailer sends referral invites (route 23) and password-reset mails; nil leaves both answering
	// Unavailable.
	Mailer mail.Sender
	// HashConcurrency bounds the password hashes running at once (0 = app.DefaultHashConcurrency:
	// a memory budget over one hash's argon2 memory cost).
	HashConcurrency int
}

// Module is the identity context in the service template: cmd/identity and the all-in-one process
// build it from the shared settings plus its own. It dials tenant (sign-up creates the user's
// tenant).
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9101", Build: build, Migrate: postgres.Migrate,
	Settings: settings, Peers: []string{"tenant"}}

const name = "identity"

// settings are identity's own.
var settings = []config.Setting{
	apikey.PepperSetting,
	sealbox.KeySetting,
	{Name: "BERTH_ISSUER", Kind: config.Text, Default: app.DefaultIssuer, Doc: "`iss` of issued tokens, which clients check"},
	withDoc(module.PublicURLSetting, "the REST edge's public base URL, for the discovery document and links in mails"),
	{Name: "BERTH_SMTP_ADDR", Kind: config.Addr, Doc: "SMTP server (host:port) for referral invites, password-reset and email-change mails; unset: they answer unavailable"},
	{Name: "BERTH_SMTP_FROM", Kind: config.Text, Doc: "sender address of the mails"},
	{Name: "BERTH_SMTP_USER", Kind: config.Text, Doc: "SMTP user (PLAIN auth over TLS)"},
	{Name: "BERTH_SMTP_PASSWORD", Kind: config.Text, Secret: true, Doc: "SMTP password"},
	{Name: "BERTH_PASSWORD_HASH_CONCURRENCY", Kind: config.Count,
		Doc: "password hashes run at once; unset: a 256 MiB budget over argon2id's 19 MiB memory cost (13)"},
}

// withDoc is s with the module's own words for it.
func withDoc(s config.Setting, doc string) config.Setting {
	s.Doc = doc
	return s
}

func build(ctx context.Context, c module.Common) (*module.Process, error) {
	tenant, err := c.Dial("tenant")
	if err != nil {
		return nil, err
	}
	mailer := c.Mailer
	if mailer == nil {
		if mailer, err = smtpMailer(c.Settings, c.Logger()); err != nil {
			return nil, err
		}
	}
	return New(ctx, Config{
		Common: c, Pepper: c.Settings.Bytes(apikey.PepperSetting.Name), SecretKey: c.Settings.Bytes(sealbox.KeySetting.Name),
		Tenant: tenant, Mailer: mailer,
		Issuer: c.Settings.String("BERTH_ISSUER"), PublicURL: c.Settings.String(module.PublicURLSetting.Name),
		HashConcurrency: c.Settings.Int("BERTH_PASSWORD_HASH_CONCURRENCY"),
	})
}

// smtpMailer builds the sender of referral invites and password-reset mails. Without an address
// the service runs without mail, and both answer Unavailable.
func smtpMailer(settings config.Values, log *slog.Logger) (mail.Sender, error) {
	addr := settings.String("BERTH_SMTP_ADDR")
	if addr == "" {
		log.Warn("BERTH_SMTP_ADDR is not set: referral invites and password resets are unavailable")
		return nil, nil
	}
	s, err := mail.NewSMTP(addr, settings.String("BERTH_SMTP_FROM"), settings.String("BERTH_SMTP_USER"), settings.String("BERTH_SMTP_PASSWORD"))
	if err != nil {
		return nil, fmt.Errorf("smtp: %w", err)
	}
	return s, nil
}

// New builds the service. With a DatabaseURL it connects and applies the identity and events
// migrations before anything is served.
func New(ctx context.Context, cfg Config) (*module.Process, error) {
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

	var (
		store  app.Store
		outbox events.OutboxSource
		inbox  events.Inbox // kept with the store, like the outbox
		pool   *pgxpool.Pool
	)
	if cfg.DatabaseURL != "" {
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("identity: database: %w", err)
		}
		store, outbox, inbox = postgres.New(pool), events.NewPGOutbox(pool), events.NewPGInbox(pool)
	} else {
		mem := &events.MemoryOutbox{}
		store, outbox, inbox = memory.New(mem), mem, events.NewMemoryInbox()
	}

	// A database written under another pepper or key would answer 401 for every API key and fail
	// to open every app's signing key; refuse to start instead, naming the variable.
	if err := pgxx.CheckKeys(ctx, pgxx.KeyChecks(pool),
		pgxx.KeyCheck{Setting: apikey.PepperSetting.Name, Key: cfg.Pepper, Was: "the pepper this database's API keys were hashed with"},
		pgxx.KeyCheck{Setting: sealbox.KeySetting.Name, Key: cfg.SecretKey, Was: sealbox.SealedWith}); err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}

	var tenants app.Tenants
	if cfg.Tenant != nil {
		tenants = tenantclient.New(cfg.Tenant)
	}
	// Identity is the source of truth for API keys, yet verifying one from the store costs two
	// reads per request; it caches successes like every other service does (pkg/authn.KeyCache),
	// evicted by its own events on every replica and at once on this one when an app is disabled.
	var keys *authn.KeyCache
	svc, err := app.New(app.Config{
		AppEnabledChanged: func(appID string) { keys.Forget(appID, "") },
		Store:             store, Pepper: cfg.Pepper, Box: box, Clock: cfg.Clock, Tenants: tenants,
		Issuer: cfg.Issuer, PublicURL: cfg.PublicURL, Passwords: cfg.Passwords, Mailer: cfg.Mailer,
		HashConcurrency: cfg.HashConcurrency, Providers: oidc.New(0), SignUpAnswerTime: app.DefaultSignUpAnswerTime,
	})
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	// Building the service hashed a random password (the stand-in verified for unknown accounts):
	// argon2id's working memory, 19 MiB at the default cost, would otherwise stay resident for
	// minutes until the runtime's scavenger returns it. Give it back now, so an idle replica holds
	// only what it uses; each sign-in's hash allocates its own anyway.
	debug.FreeOSMemory()
	// Tokens are verified against the store on every call: identity is the source the other
	// services' token caches ask, and a freeze must hold at once for its own routes.
	keys = authn.NewKeyCache(svc, authn.RemoteTTL)
	p, err := module.NewProcess(cfg.Common, name,
		authn.Policy{Keys: keys, Tokens: svc, Operators: svc, Apps: svc, Origins: svc, AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken})
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	p.Watches = append(p.Watches, func(ctx context.Context) (func(), error) { return keys.Watch(ctx, cfg.Bus) })
	if pool != nil {
		p.UsePool(pool)
	}
	grpcapi.Register(p, svc)
	p.Relay = events.NewRelay(name, outbox, cfg.Bus, log.With("component", "identity-relay"))
	p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
		return outbound.ConsumeEndpointEvents(ctx, cfg.Bus, inbox, svc, log.With("component", "identity-outbound"))
	})
	return p, nil
}
