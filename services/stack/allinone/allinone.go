package allinone

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/natsx"
	identity "github.com/berthhq/berth/services/identity/server"
	tenant "github.com/berthhq/berth/services/tenant/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
)

// Config is the all-in-one configuration (see FromEnv for the variables).
type Config struct {
	HTTPAddr         string // REST edge; "127.0.0.1:0" picks a free port
	IdentityGRPCAddr string // identity gRPC (for berthctl and internal callers)
	TenantGRPCAddr   string
	// IdentityDatabaseURL and TenantDatabaseURL select Postgres per service; "" = memory stores.
	IdentityDatabaseURL string
	TenantDatabaseURL   string
	NATSURL             string // "" = embedded JetStream server
	EventPrefix         string // stream/subject prefix; "" = "berth"
	Pepper              []byte
	SecretKey           []byte
	AdminToken          string
	ServiceToken        string
	Log                 *slog.Logger
}

// Stack is a running all-in-one process.
type Stack struct {
	BaseURL      string // http://<edge address>
	IdentityAddr string
	TenantAddr   string
	Bus          events.Bus

	cancel  context.CancelFunc
	closers []func()
	wg      sync.WaitGroup
	http    *http.Server
}

// Start brings everything up and returns once the edge accepts connections.
func Start(ctx context.Context, cfg Config) (_ *Stack, err error) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Stack{cancel: cancel}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	nc, err := s.connectNATS(cfg.NATSURL)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	s.Bus = events.Bus{JS: js, Prefix: cfg.EventPrefix}
	if err := s.Bus.EnsureStreams(ctx); err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}

	idSvc, err := identity.New(ctx, identity.Config{
		DatabaseURL:  cfg.IdentityDatabaseURL,
		Bus:          s.Bus,
		Pepper:       cfg.Pepper,
		SecretKey:    cfg.SecretKey,
		AdminToken:   cfg.AdminToken,
		ServiceToken: cfg.ServiceToken,
		Log:          log.With("service", "identity"),
	})
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	s.closers = append(s.closers, idSvc.Close)
	if s.IdentityAddr, err = s.serve(idSvc.GRPC(), cfg.IdentityGRPCAddr); err != nil {
		return nil, err
	}
	s.run(runCtx, log, "identity", idSvc.Run)

	identityConn, err := grpcx.Dial(s.IdentityAddr, cfg.ServiceToken)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = identityConn.Close() })

	tnSvc, err := tenant.New(ctx, tenant.Config{
		DatabaseURL:  cfg.TenantDatabaseURL,
		Bus:          s.Bus,
		Identity:     identityConn,
		AdminToken:   cfg.AdminToken,
		ServiceToken: cfg.ServiceToken,
		Log:          log.With("service", "tenant"),
	})
	if err != nil {
		return nil, fmt.Errorf("tenant: %w", err)
	}
	s.closers = append(s.closers, tnSvc.Close)
	if s.TenantAddr, err = s.serve(tnSvc.GRPC(), cfg.TenantGRPCAddr); err != nil {
		return nil, err
	}
	s.run(runCtx, log, "tenant", tnSvc.Run)

	tenantConn, err := grpcx.Dial(s.TenantAddr, "")
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = tenantConn.Close() })

	handler, err := edge.New(runCtx, edge.Backends{Identity: identityConn, Tenant: tenantConn}, log.With("service", "edge"))
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.HTTPAddr, err)
	}
	s.BaseURL = "http://" + ln.Addr().String()
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("edge stopped", "error", err)
		}
	}()
	return s, nil
}

func (s *Stack) connectNATS(url string) (*nats.Conn, error) {
	if url != "" {
		nc, err := natsx.Connect(url)
		if err != nil {
			return nil, fmt.Errorf("nats: %w", err)
		}
		s.closers = append(s.closers, nc.Close)
		return nc, nil
	}
	emb, err := natsx.StartEmbedded("", "")
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	s.closers = append(s.closers, emb.Close)
	return emb.Conn, nil
}

func (s *Stack) serve(g *grpc.Server, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = g.Serve(ln)
	}()
	s.closers = append(s.closers, g.GracefulStop)
	return ln.Addr().String(), nil
}

func (s *Stack) run(ctx context.Context, log *slog.Logger, name string, fn func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("background work stopped", "service", name, "error", err)
		}
	}()
}

// Close stops the edge first (no new requests), then the services' background work, then the
// servers and connections in reverse order of creation.
func (s *Stack) Close() {
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.http.Shutdown(ctx)
		cancel()
	}
	s.cancel()
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.wg.Wait()
}
