// Package server is the identity service's composition root: it picks the stores (PostgreSQL, or
// memory for the embedded development stack), wires the use cases, the gRPC server with the access
// policy, and the outbox relay. cmd/identity and the all-in-one process both build the service here.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/identity/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
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
	// Mailer sends referral invites (route 23); nil leaves them answering Unavailable.
	Mailer mail.Sender
	// HashConcurrency bounds the password hashes running at once (0 = app.DefaultHashConcurrency:
	// a memory budget over one hash's argon2 memory cost).
	HashConcurrency int
}

// Module is the identity context in the service template: cmd/identity and the all-in-one process
// build it from the shared settings plus its own (see configFrom).
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9101", Build: build, Migrate: postgres.Migrate}

const name = "identity"

// build reads identity's own settings from c.Env:
//
//	BERTH_API_KEY_PEPPER   HMAC pepper of API-key hashes (hex or base64; required)
//	BERTH_SECRET_KEY       32-byte AES-GCM key sealing private keys at rest (hex or base64; required)
//	BERTH_ISSUER           `iss` of issued tokens ("berth")
//	BERTH_PUBLIC_URL       the REST edge's public base URL, for discovery and invite links
//	BERTH_SMTP_ADDR        SMTP server host:port for referral invites, unless c.Mailer is set
//	                       (unset: invites unavailable); BERTH_SMTP_FROM, _USER, _PASSWORD
//	BERTH_PASSWORD_HASH_CONCURRENCY  password hashes allowed at once (app.DefaultHashConcurrency)
//
// and dials the tenant module (sign-up creates the user's tenant).
func build(ctx context.Context, c module.Common) (*module.Process, error) {
	pepper, err := c.Env.Bytes("BERTH_API_KEY_PEPPER")
	if err != nil {
		return nil, err
	}
	secret, err := c.Env.Bytes("BERTH_SECRET_KEY")
	if err != nil {
		return nil, err
	}
	tenant, err := c.Dial("tenant")
	if err != nil {
		return nil, err
	}
	mailer := c.Mailer
	if mailer == nil {
		if mailer, err = smtpMailer(c.Env, c.Logger()); err != nil {
			return nil, err
		}
	}
	hashes, err := positiveInt(c.Env, "BERTH_PASSWORD_HASH_CONCURRENCY")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{
		Common: c, Pepper: pepper, SecretKey: secret, Tenant: tenant, Mailer: mailer,
		Issuer: c.Env.String("BERTH_ISSUER", ""), PublicURL: c.Env.String("BERTH_PUBLIC_URL", ""),
		HashConcurrency: hashes,
	})
}

// positiveInt reads a positive integer setting; unset is 0 (the default applies).
func positiveInt(env config.Env, name string) (int, error) {
	v := env.String(name, "")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s must be a positive integer", name)
	}
	return n, nil
}

// smtpMailer builds the sender of referral invites. Without an address the service runs without
// mail, and invites answer Unavailable.
func smtpMailer(env config.Env, log *slog.Logger) (mail.Sender, error) {
	addr := env.String("BERTH_SMTP_ADDR", "")
	if addr == "" {
		log.Warn("BERTH_SMTP_ADDR is not set: referral invites are unavailable")
		return nil, nil
	}
	s, err := mail.NewSMTP(addr, env.String("BERTH_SMTP_FROM", ""), env.String("BERTH_SMTP_USER", ""), env.String("BERTH_SMTP_PASSWORD", ""))
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
		pool   *pgxpool.Pool
	)
	if cfg.DatabaseURL != "" {
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("identity: database: %w", err)
		}
		store, outbox = postgres.New(pool), events.NewPGOutbox(pool)
	} else {
		mem := &events.MemoryOutbox{}
		store, outbox = memory.New(mem), mem
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
		HashConcurrency: cfg.HashConcurrency,
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
		authn.Policy{Keys: keys, Tokens: svc, Operators: svc, Origins: svc, AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken})
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
	return p, nil
}
