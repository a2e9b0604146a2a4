package allinone

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/natsx"
	analytics "github.com/berthhq/berth/services/analytics/server"
	identity "github.com/berthhq/berth/services/identity/server"
	tenant "github.com/berthhq/berth/services/tenant/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
)

// Config is the all-in-one configuration (see FromEnv for the variables).
type Config struct {
	HTTPAddr          string // REST edge; "127.0.0.1:0" picks a free port
	IdentityGRPCAddr  string // identity gRPC (for berthctl and internal callers)
	TenantGRPCAddr    string
	AnalyticsGRPCAddr string
	// Per-service Postgres URLs; "" = memory stores.
	IdentityDatabaseURL  string
	TenantDatabaseURL    string
	AnalyticsDatabaseURL string
	// Issuer is the `iss` of every token; PublicURL the edge's public base URL ("" = the address
	// it listens on), used in discovery documents and login links.
	Issuer    string
	PublicURL string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For the login page believes.
	TrustedProxies []netip.Prefix
	NATSURL        string // "" = embedded JetStream server
	EventPrefix    string // stream/subject prefix; "" = "berth"
	Pepper         []byte
	SecretKey      []byte
	AdminToken     string
	ServiceToken   string
	Log            *slog.Logger
}

// Stack is a running all-in-one process.
type Stack struct {
	BaseURL       string // http://<edge address>
	IdentityAddr  string
	TenantAddr    string
	AnalyticsAddr string
	Bus           events.Bus
	// Mailbox receives every email the run sends (referral invites); /dev/mailbox shows it.
	Mailbox *mail.Mailbox

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
	s := &Stack{cancel: cancel, Mailbox: mail.NewMailbox(log.With("service", "mailbox"))}
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

	// Listen first, so every service can be handed connections to the others before any starts:
	// identity calls tenant (sign-up creates the tenant) and tenant calls identity (users, keys).
	edgeLn, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.HTTPAddr, err)
	}
	s.closers = append(s.closers, func() { _ = edgeLn.Close() })
	s.BaseURL = "http://" + edgeLn.Addr().String()
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = s.BaseURL
	}
	idLn, err := s.listen(cfg.IdentityGRPCAddr, &s.IdentityAddr)
	if err != nil {
		return nil, err
	}
	tnLn, err := s.listen(cfg.TenantGRPCAddr, &s.TenantAddr)
	if err != nil {
		return nil, err
	}
	anLn, err := s.listen(cfg.AnalyticsGRPCAddr, &s.AnalyticsAddr)
	if err != nil {
		return nil, err
	}
	identityConn, err := s.dial(s.IdentityAddr, cfg.ServiceToken)
	if err != nil {
		return nil, err
	}
	tenantConn, err := s.dial(s.TenantAddr, cfg.ServiceToken)
	if err != nil {
		return nil, err
	}
	analyticsConn, err := s.dial(s.AnalyticsAddr, "")
	if err != nil {
		return nil, err
	}

	idSvc, err := identity.New(ctx, identity.Config{
		DatabaseURL:  cfg.IdentityDatabaseURL,
		Bus:          s.Bus,
		Tenant:       tenantConn,
		Mailer:       s.Mailbox,
		Issuer:       cfg.Issuer,
		PublicURL:    publicURL,
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
	s.serve(idSvc.GRPC(), idLn)
	s.run(runCtx, log, "identity", idSvc.Run)

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
	s.serve(tnSvc.GRPC(), tnLn)
	s.run(runCtx, log, "tenant", tnSvc.Run)

	anSvc, err := analytics.New(ctx, analytics.Config{
		DatabaseURL:  cfg.AnalyticsDatabaseURL,
		Bus:          s.Bus,
		Identity:     identityConn,
		AdminToken:   cfg.AdminToken,
		ServiceToken: cfg.ServiceToken,
		Log:          log.With("service", "analytics"),
	})
	if err != nil {
		return nil, fmt.Errorf("analytics: %w", err)
	}
	s.closers = append(s.closers, anSvc.Close)
	s.serve(anSvc.GRPC(), anLn)
	s.run(runCtx, log, "analytics", anSvc.Run)

	// The edge's identity connection carries the service token: the hosted login page calls the
	// service-only LoginService. The token never reaches REST callers' requests (see gateway/edge).
	handler, err := edge.New(runCtx, edge.Backends{Identity: identityConn, Tenant: tenantConn, Analytics: analyticsConn}, log.With("service", "edge"), edge.WithTrustedProxies(cfg.TrustedProxies))
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	s.http = &http.Server{Handler: devPages(publicURL, s.Mailbox, handler), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(edgeLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
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

func (s *Stack) listen(addr string, actual *string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	s.closers = append(s.closers, func() { _ = ln.Close() })
	*actual = ln.Addr().String()
	return ln, nil
}

func (s *Stack) dial(addr, serviceToken string) (*grpc.ClientConn, error) {
	conn, err := grpcx.Dial(addr, serviceToken)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = conn.Close() })
	return conn, nil
}

func (s *Stack) serve(g *grpc.Server, ln net.Listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = g.Serve(ln)
	}()
	s.closers = append(s.closers, g.GracefulStop)
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
