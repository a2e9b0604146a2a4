package module

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
)

// healthEvery is how often Run re-checks readiness for the gRPC health service: clients balancing
// on health (and the edge's readiness) learn of a lost database within this time.
const healthEvery = 2 * time.Second

// Process is a built module: a service's gRPC server and what runs behind it. A module's Build
// fills it in: registers its APIs on Server, sets Pool when it has a database, Relay when it
// publishes events, and lists its event Watches and Consumers, which Run starts.
type Process struct {
	Name   string
	Server *grpc.Server
	// Pool is the module's database (nil with memory stores); Ready pings it and Close closes it.
	Pool *pgxpool.Pool
	// Relay publishes the module's outbox (nil when it publishes nothing).
	Relay *events.Relay
	// Watches are per-process subscriptions (cache eviction), started by Run.
	Watches []func(ctx context.Context) (stop func(), err error)
	// Consumers are durable consumers, started by Run; one that is lost ends Run with an error.
	Consumers []func(ctx context.Context) (*events.Consumer, error)

	bus    events.Bus
	health *health.Server
	stats  *poolStats
	local  *grpcx.Local

	mu      sync.Mutex
	running []*events.Consumer // nil until Run has started them all
}

// NewProcess returns a process serving gRPC with the template's interceptor chain and access
// policy. Its health service answers NOT_SERVING until Run has started and found it ready.
func NewProcess(c Common, name string, policy authn.Policy) (*Process, error) {
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	// Under TLS, the service token alone no longer admits a call: the caller's certificate must too.
	policy.ServiceCertificate = c.TLS != nil
	srv, err := grpcx.NewServer(grpcx.ServerOptions{Log: c.Logger(), Policy: policy, Health: hs, TLS: c.TLS, Local: c.Local})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Process{Name: name, Server: srv, bus: c.Bus, health: hs, local: c.Local}, nil
}

// RegisterService serves a service on the process's gRPC server and, when the process has one, on
// its Local: a module registers its services on the Process, never on the server alone, so that
// in-process callers find every method the network offers.
func (p *Process) RegisterService(desc *grpc.ServiceDesc, impl any) {
	p.Server.RegisterService(desc, impl)
	if p.local != nil {
		p.local.RegisterService(desc, impl)
	}
}

// UsePool makes pool the process's database: readiness pings it, /metrics reports its statistics
// and Close closes it.
func (p *Process) UsePool(pool *pgxpool.Pool) {
	p.Pool = pool
	p.stats = watchPool(p.Name, pool)
}

// GRPC is the server to serve on a listener.
func (p *Process) GRPC() *grpc.Server { return p.Server }

// Run starts the watches and consumers, publishes the outbox and keeps the health service in step
// with Ready, until ctx ends (nil) or a consumer is lost (an error: the process should stop, so
// that its next start creates the durable again). It stops what it started before returning.
func (p *Process) Run(ctx context.Context) error {
	if p.Relay == nil && len(p.Watches) == 0 && len(p.Consumers) == 0 {
		return p.watchHealth(ctx, nil)
	}
	if p.bus.JS == nil {
		return fmt.Errorf("%s: Run needs a JetStream bus", p.Name)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, watch := range p.Watches {
		stop, err := watch(ctx)
		if err != nil {
			return p.startFailed(ctx, "watch events", err)
		}
		defer stop()
	}
	var consumers []*events.Consumer
	lost := make(chan string, len(p.Consumers))
	for _, start := range p.Consumers {
		c, err := start(ctx)
		if err != nil {
			return p.startFailed(ctx, "start consumer", err)
		}
		defer c.Stop()
		consumers = append(consumers, c)
		go func() {
			select {
			case <-c.Lost():
				lost <- c.Name()
			case <-ctx.Done():
			}
		}()
	}
	p.mu.Lock()
	p.running = consumers
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = nil
		p.mu.Unlock()
	}()

	relayDone := make(chan error, 1)
	if p.Relay != nil {
		go func() { relayDone <- p.Relay.Run(ctx) }()
	} else {
		relayDone <- nil
	}
	err := p.watchHealth(ctx, lost)
	cancel()
	if rerr := <-relayDone; err == nil {
		err = rerr
	}
	return err
}

// startFailed is Run's answer when starting its background work failed: none when ctx ended
// meanwhile (a stop during start-up is a stop, not a failure), the error otherwise.
func (p *Process) startFailed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", p.Name, what, err)
}

// watchHealth sets the health status from Ready every healthEvery until ctx ends or a consumer is
// lost; then it answers NOT_SERVING, so balancers stop sending calls before the process stops.
func (p *Process) watchHealth(ctx context.Context, lost <-chan string) error {
	defer p.health.Shutdown()
	tick := time.NewTicker(healthEvery)
	defer tick.Stop()
	for {
		p.updateHealth(ctx)
		select {
		case <-ctx.Done():
			return nil
		case name := <-lost:
			p.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
			return fmt.Errorf("%s: consumer %s is gone", p.Name, name)
		case <-tick.C:
		}
	}
}

func (p *Process) updateHealth(ctx context.Context) {
	checkCtx, cancel := context.WithTimeout(ctx, healthEvery)
	defer cancel()
	st := healthpb.HealthCheckResponse_SERVING
	if p.Ready(checkCtx) != nil {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	p.health.SetServingStatus("", st)
}

// Ready reports why the process cannot serve yet (or any more), or nil: its database answers, and
// Run has started its consumers and the server still knows every durable.
func (p *Process) Ready(ctx context.Context) error {
	if p.Pool != nil {
		if err := p.Pool.Ping(ctx); err != nil {
			return fmt.Errorf("%s: database: %w", p.Name, err)
		}
	}
	if len(p.Consumers) == 0 {
		return nil
	}
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if running == nil {
		return errors.New(p.Name + ": consumers are not running")
	}
	for _, c := range running {
		if err := c.Check(ctx); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return nil
}

// Close stops the gRPC server at once (use GRPC().GracefulStop first to drain calls) and closes
// the database. Call it after Run has returned, so nothing still uses the pool.
func (p *Process) Close() {
	p.Server.Stop()
	if p.stats != nil {
		p.stats.unregister()
	}
	if p.Pool != nil {
		p.Pool.Close()
	}
}
