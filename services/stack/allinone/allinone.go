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

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// Config is the all-in-one configuration (see FromEnv for the variables).
type Config struct {
	HTTPAddr string // REST edge; "127.0.0.1:0" picks a free port
	// GRPCAddrs is where each module serves gRPC (for berthctl and internal callers), by module
	// name; a module missing here listens on its DefaultAddr.
	GRPCAddrs map[string]string
	// DatabaseURLs is each module's own PostgreSQL database, by module name; a module missing here
	// runs on memory stores.
	DatabaseURLs map[string]string
	// Env holds the modules' own settings (identity's pepper, secret key, issuer, ...). The edge's
	// public URL, BERTH_PUBLIC_URL, defaults to the address the edge listens on.
	Env config.Env
	// TrustedProxies are the reverse proxies whose X-Forwarded-For the login page believes.
	TrustedProxies []netip.Prefix
	NATSURL        string // "" = embedded JetStream server
	EventPrefix    string // stream/subject prefix; "" = "berth"
	AdminToken     string
	ServiceToken   string
	// TLS carries the gRPC between the modules and from the edge over TLS, service calls with
	// mutual TLS; nil is plaintext (the default of make run).
	TLS *grpcx.TLS
	// SandboxTimeScale multiplies the waits of the sandboxes' webhook retry schedules (0 means
	// 1): tests shrink a provider's minutes to milliseconds.
	SandboxTimeScale float64
	Log              *slog.Logger
}

// Stack is a running all-in-one process.
type Stack struct {
	BaseURL string            // http://<edge address>
	Addrs   map[string]string // module name -> gRPC address it serves on
	TLS     *grpcx.TLS        // what a client of those addresses needs (Config.TLS)
	Bus     events.Bus
	// Mailbox receives every email the run sends (referral invites); /dev/mailbox shows it.
	Mailbox *mail.Mailbox
	// Sandboxes are the provider sandboxes served on the edge's address, which billing calls.
	Sandboxes *mount.Sandboxes
	// DatabaseURLs are the modules' databases (Config.DatabaseURLs; memory stores where absent).
	DatabaseURLs map[string]string

	procs   []*module.Process
	cancel  context.CancelFunc
	work    sync.WaitGroup // the modules' Run
	serving sync.WaitGroup // gRPC and HTTP servers
	closers []func()       // connections, listeners and NATS, closed last, in reverse order
	http    *http.Server
}

// Addr is the gRPC address of the named module.
func (s *Stack) Addr(module string) string { return s.Addrs[module] }

// Start brings every module of Modules up and returns once the edge accepts connections.
func Start(ctx context.Context, cfg Config) (_ *Stack, err error) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Stack{cancel: cancel, Addrs: map[string]string{}, TLS: cfg.TLS, DatabaseURLs: cfg.DatabaseURLs, Mailbox: mail.NewMailbox(log.With("service", "mailbox"))}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.Bus, err = s.connectBus(ctx, cfg); err != nil {
		return nil, err
	}

	// Listen first, so every module can be handed connections to the others before any starts:
	// identity calls tenant (sign-up creates the tenant) and tenant calls identity (users, keys).
	edgeLn, err := s.listen(cfg.HTTPAddr)
	if err != nil {
		return nil, err
	}
	s.BaseURL = "http://" + edgeLn.Addr().String()
	listeners := map[string]net.Listener{}
	serviceConns, edgeConns := map[string]grpc.ClientConnInterface{}, map[string]grpc.ClientConnInterface{}
	// Callers inside the process reach each module's unary methods in process, through the same
	// interceptor chain; streams, and every call of a process outside (berthctl, internal teams),
	// still use the listeners. Under TLS every call goes over it, so the certificate checks hold.
	locals := map[string]*grpcx.Local{}
	for _, m := range Modules {
		addr, ok := cfg.GRPCAddrs[m.Name]
		if !ok {
			addr = m.DefaultAddr
		}
		if listeners[m.Name], err = s.listen(addr); err != nil {
			return nil, err
		}
		s.Addrs[m.Name] = listeners[m.Name].Addr().String()
		// Modules call each other with the service token; the edge forwards callers' credentials
		// only, so no REST request ever runs as a Berth service.
		service, err := s.dial(s.Addrs[m.Name], cfg.ServiceToken)
		if err != nil {
			return nil, err
		}
		edgeConn, err := s.dial(s.Addrs[m.Name], "")
		if err != nil {
			return nil, err
		}
		serviceConns[m.Name], edgeConns[m.Name] = service, edgeConn
		if cfg.TLS == nil {
			locals[m.Name] = grpcx.NewLocal()
			serviceConns[m.Name] = locals[m.Name].Conn(service, cfg.ServiceToken)
			edgeConns[m.Name] = locals[m.Name].Conn(edgeConn, "")
		}
	}

	env := cfg.Env
	if env == nil {
		env = config.OS
	}
	publicURL := config.Overlay(env, map[string]string{"BERTH_PUBLIC_URL": s.BaseURL}).String("BERTH_PUBLIC_URL", s.BaseURL)
	// The sandboxes' pages are opened by browsers (public URL); billing calls their APIs over the
	// loopback address, which works whatever proxy stands in front of the public one.
	s.Sandboxes = mount.NewWithOptions(publicURL, log, mount.Options{TimeScale: cfg.SandboxTimeScale})
	common := module.Common{
		Bus: s.Bus, AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken, Mailer: s.Mailbox, TLS: cfg.TLS,
		Env: config.Overlay(env, map[string]string{"BERTH_PUBLIC_URL": s.BaseURL,
			"BERTH_PSPX_URL": s.BaseURL + mount.PspxPath, "BERTH_PSPY_URL": s.BaseURL + mount.PspyPath}),
		Dial: func(name string) (grpc.ClientConnInterface, error) {
			if conn, ok := serviceConns[name]; ok {
				return conn, nil
			}
			return nil, fmt.Errorf("no module %q in the all-in-one process", name)
		},
	}
	for _, m := range Modules {
		c := common
		c.DatabaseURL, c.Log, c.Local = cfg.DatabaseURLs[m.Name], log.With("service", m.Name), locals[m.Name]
		proc, err := m.Build(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		s.procs = append(s.procs, proc)
		s.serving.Go(func() { _ = proc.GRPC().Serve(listeners[m.Name]) })
		s.work.Go(func() {
			if err := proc.Run(runCtx); err != nil {
				log.Error("background work stopped", "service", m.Name, "error", err)
			}
		})
	}

	handler, err := edge.New(runCtx, edgeConns, log.With("service", "edge"),
		edge.WithLogin(serviceConns[edge.LoginModule]), edge.WithPayment(serviceConns[edge.PaymentModule]),
		edge.WithTrustedProxies(cfg.TrustedProxies))
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	mux := http.NewServeMux()
	ops.Mount(mux, s.Ready)
	s.Sandboxes.Register(mux)
	mux.Handle("/", devPages(publicURL, s.Mailbox, handler))
	// The edge's rules for paths and requests no route can take hold in front of the mux too.
	s.http = &http.Server{Handler: edge.Front(mux, handler), ReadHeaderTimeout: 10 * time.Second}
	s.serving.Go(func() {
		if err := s.http.Serve(edge.Listener(edgeLn, log.With("service", "edge"))); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("edge stopped", "error", err)
		}
	})
	return s, nil
}

// Ready reports the first module that is not ready, or nil (the all-in-one's /readyz).
func (s *Stack) Ready(ctx context.Context) error {
	for _, p := range s.procs {
		if err := p.Ready(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) connectBus(ctx context.Context, cfg Config) (events.Bus, error) {
	var js jetstream.JetStream
	var err error
	if cfg.NATSURL != "" {
		nc, cerr := natsx.Connect(cfg.NATSURL)
		if cerr != nil {
			return events.Bus{}, fmt.Errorf("nats: %w", cerr)
		}
		s.closers = append(s.closers, nc.Close)
		js, err = jetstream.New(nc)
	} else {
		emb, serr := natsx.StartEmbedded("", "")
		if serr != nil {
			return events.Bus{}, fmt.Errorf("embedded nats: %w", serr)
		}
		s.closers = append(s.closers, emb.Close)
		js, err = jetstream.New(emb.Conn)
	}
	if err != nil {
		return events.Bus{}, fmt.Errorf("jetstream: %w", err)
	}
	bus := events.Bus{JS: js, Prefix: cfg.EventPrefix}
	if err := bus.EnsureStreams(ctx); err != nil {
		return events.Bus{}, fmt.Errorf("streams: %w", err)
	}
	return bus, nil
}

func (s *Stack) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	s.closers = append(s.closers, func() { _ = ln.Close() })
	return ln, nil
}

func (s *Stack) dial(addr, serviceToken string) (*grpc.ClientConn, error) {
	conn, err := grpcx.Dial(addr, serviceToken, s.TLS)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = conn.Close() })
	return conn, nil
}

// Close stops the edge first (no new requests), drains the gRPC servers, waits for every module's
// background work (relays, consumers) to finish what it holds, and only then closes the modules'
// databases, the connections and NATS: closing those first would cut off work still in flight.
func (s *Stack) Close() {
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.http.Shutdown(ctx)
		cancel()
	}
	// The sandboxes' webhook deliveries stop before the services they call.
	if s.Sandboxes != nil {
		s.Sandboxes.Close()
	}
	for _, p := range s.procs {
		p.GRPC().GracefulStop()
	}
	s.cancel()
	s.work.Wait()
	for _, p := range s.procs {
		p.Close()
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.serving.Wait()
}
