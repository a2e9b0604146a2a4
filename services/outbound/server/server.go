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
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/outbound/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/memory"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/adapters/stream"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// Config configures the service.
type Config struct {
	// Common holds what every module is built from; DatabaseURL "" selects memory stores (the
	// embedded development default only).
	module.Common
	// SecretKey is the 32-byte key sealing endpoint secrets.
	SecretKey []byte
	// Identity is the connection to the identity service, which verifies API keys; its calls must
	// carry the service token.
	Identity grpc.ClientConnInterface
	// AllowPrivate accepts http endpoint URLs and delivers to loopback and private addresses (the
	// all-in-one, for a receiver on the developer's machine). Production leaves it off.
	AllowPrivate bool
	// TimeScale multiplies the retry schedule; 0 means 1.
	TimeScale float64
	// Poll is how often the delivery runner looks for due deliveries besides being woken by this
	// process's own; 0 means defaultPoll.
	Poll time.Duration
}

// Settings of the outbound module.
var (
	allowPrivate = config.Setting{Name: "BERTH_OUTBOUND_ALLOW_PRIVATE", Kind: config.Flag, Default: "false",
		Doc: "accept http webhook URLs and deliver to loopback, private and link-local addresses (the all-in-one sets it so a local receiver works); never in production, where it would let an app's endpoint reach internal services"}
	timeScale = config.Setting{Name: "BERTH_OUTBOUND_TIME_SCALE", Kind: config.Factor, Default: "1",
		Doc: "multiplies the webhook retry schedule (0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); tests shrink it"}
)

// Module is the outbound context in the service template. It dials identity, which verifies the
// write API keys of its routes.
var Module = module.Module{Name: name, DefaultAddr: "127.0.0.1:9106", Build: build, Migrate: postgres.Migrate,
	Settings: []config.Setting{sealbox.KeySetting, allowPrivate, timeScale},
	Peers:    []string{"identity"}}

const (
	name        = "outbound"
	defaultPoll = 250 * time.Millisecond
)

func build(ctx context.Context, c module.Common) (*module.Process, error) {
	identity, err := c.Dial("identity")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{Common: c, SecretKey: c.Settings.Bytes(sealbox.KeySetting.Name), Identity: identity,
		AllowPrivate: c.Settings.Bool(allowPrivate.Name), TimeScale: c.Settings.Float(timeScale.Name)})
}

// New opens the store (migrating Postgres) and builds the process: the gRPC server, the outbox
// relay (an endpoint disabled after five days of failures is an event), the consumers that turn
// identity's, tenant's and billing's events into deliveries, and the delivery runner.
func New(ctx context.Context, cfg Config) (*module.Process, error) {
	if cfg.Identity == nil {
		return nil, errors.New("outbound: an identity connection is required")
	}
	box, err := sealbox.New(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("outbound: %s: %w", sealbox.KeySetting.Name, err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = defaultPoll
	}
	var (
		store  app.Store
		outbox events.OutboxSource
		inbox  events.Inbox // kept with the store, so deliveries commit with the consumed event's record
		pool   *pgxpool.Pool
	)
	if cfg.DatabaseURL == "" {
		mem := &events.MemoryOutbox{}
		store, outbox, inbox = memory.New(mem), mem, events.NewMemoryInbox()
	} else {
		if pool, err = pgxx.OpenMigrated(ctx, cfg.DatabaseURL, postgres.Migrate); err != nil {
			return nil, fmt.Errorf("outbound: database: %w", err)
		}
		store, outbox, inbox = postgres.New(pool), events.NewPGOutbox(pool), events.NewPGInbox(pool)
	}
	closePool := func() {
		if pool != nil {
			pool.Close()
		}
	}
	// Endpoint secrets sealed under another key would fail every delivery; refuse to start instead.
	if err := pgxx.CheckKeys(ctx, pgxx.KeyChecks(pool), pgxx.KeyCheck{Setting: sealbox.KeySetting.Name, Key: cfg.SecretKey, Was: sealbox.SealedWith}); err != nil {
		closePool()
		return nil, err
	}
	svc, err := app.New(app.Config{
		Store: store, Box: box, Sender: httpsend.New(cfg.AllowPrivate), URLs: domain.URLPolicy{AllowHTTP: cfg.AllowPrivate},
		TimeScale: cfg.TimeScale, Clock: cfg.Clock, NewID: app.TimeOrderedID,
	})
	if err != nil {
		closePool()
		return nil, err
	}
	creds := authn.NewRemote(cfg.Identity)
	p, err := module.NewProcess(cfg.Common, name, creds.Policy(cfg.AdminToken, cfg.ServiceToken))
	if err != nil {
		closePool()
		return nil, err
	}
	if pool != nil {
		p.UsePool(pool)
	}
	grpcapi.Register(p, svc)
	p.Relay = events.NewRelay(name, outbox, cfg.Bus, cfg.Log)
	p.Watches = append(p.Watches,
		func(ctx context.Context) (func(), error) { return creds.Watch(ctx, cfg.Bus) },
		func(ctx context.Context) (func(), error) {
			ctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				svc.RunDeliveries(ctx, cfg.Poll, cfg.Log)
			}()
			return func() { cancel(); <-done }, nil
		})
	for _, source := range stream.Contexts {
		p.Consumers = append(p.Consumers, func(ctx context.Context) (*events.Consumer, error) {
			return stream.Consume(ctx, cfg.Bus, inbox, svc, source, cfg.Log)
		})
	}
	return p, nil
}
