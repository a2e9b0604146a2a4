package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
)

// ShutdownGrace is how long in-flight calls and requests may take to finish after a stop.
const ShutdownGrace = 15 * time.Second

// Options say how to run a set of modules in this process.
type Options struct {
	Log *slog.Logger
	Bus events.Bus // connected (ConnectBus)
	// Settings are each module's parsed own settings, by module name.
	Settings map[string]config.Values
	// DatabaseURLs are each module's database, by name; a module missing here runs on memory
	// stores (only the all-in-one does).
	DatabaseURLs map[string]string
	// GRPCAddrs are where each module serves gRPC, by name; a module missing here listens on its
	// DefaultAddr.
	GRPCAddrs map[string]string
	// GRPCAddrVars name the variable each module's gRPC address comes from, by name, for the refusal
	// of an address in use; a module missing here names its Module.GRPCAddrVar (the all-in-one's).
	GRPCAddrVars map[string]string
	AdminToken   string
	ServiceToken string
	TLS          *grpcx.TLS
	Mailer       mail.Sender
	// Remote reaches a module that does not run in this process (by name), with the service token
	// when service is true; nil means every module called runs here.
	Remote func(name string, service bool) (grpc.ClientConnInterface, error)
	// InProcess lets callers inside the process (other modules, the edge) reach the modules' unary
	// methods without the network, through the same interceptor chain (grpcx.Local). Streams, and
	// every caller outside the process, still use the listeners. It is ignored under TLS, so the
	// certificate checks hold for every call.
	InProcess bool
	// HTTPListener is where the modules' sites (Module.Web) are served, with the ops endpoints
	// when they have no listener of their own (OpsAddr ""); nil when no module serves HTTP.
	HTTPListener net.Listener
	// OpsAddr serves /healthz, /readyz and /metrics on a listener of their own; "" leaves them to
	// the HTTP listener.
	OpsAddr string
	// Profiler serves the Go profiler with the ops endpoints.
	Profiler bool
}

// conns are gRPC connections by module name.
type conns map[string]grpc.ClientConnInterface

// Host is a running process: its modules, their gRPC servers and background work, and their
// sites on one HTTP server.
type Host struct {
	Addrs map[string]string // module name -> the gRPC address it serves on

	opts    Options
	procs   []*module.Process
	cancel  context.CancelFunc
	failed  chan error     // a module's background work that stopped with an error
	work    sync.WaitGroup // the modules' Run
	serving sync.WaitGroup // gRPC and HTTP servers
	closers []func()       // connections and listeners, closed last, in reverse order
	sites   []*module.Site
	http    *http.Server
	ops     *http.Server
	once    sync.Once
}

// Start listens for every module that serves gRPC, builds each module from the options, serves
// it, runs its background work, and serves the modules' sites and the ops endpoints. It returns
// once everything accepts connections; Close stops it all in order. A module may dial any module
// of the list (they all listen before the first is built) or, through Remote, any other.
func Start(ctx context.Context, modules []module.Module, o Options) (_ *Host, err error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	runCtx, cancel := context.WithCancel(context.Background())
	h := &Host{Addrs: map[string]string{}, opts: o, cancel: cancel, failed: make(chan error, len(modules)+1)}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	listeners, dial, locals, err := h.listenAll(modules)
	if err != nil {
		return nil, err
	}
	common := module.Common{Bus: o.Bus, AdminToken: o.AdminToken, ServiceToken: o.ServiceToken, Mailer: o.Mailer, TLS: o.TLS}
	if o.HTTPListener != nil {
		// The host owns the listener from here: a start that fails closes it.
		h.closers = append(h.closers, func() { _ = o.HTTPListener.Close() })
		common.BaseURL = "http://" + o.HTTPListener.Addr().String()
	}
	for _, m := range modules {
		c := common
		c.DatabaseURL, c.Log, c.Local, c.Settings = o.DatabaseURLs[m.Name], o.Log.With("service", m.Name), locals[m.Name], o.Settings[m.Name]
		c.Dial = func(name string) (grpc.ClientConnInterface, error) { return dial(name, true) }
		c.Forward = func(name string) (grpc.ClientConnInterface, error) { return dial(name, false) }
		if m.Build != nil {
			if err := h.serve(ctx, runCtx, m, c, listeners[m.Name]); err != nil {
				return nil, err
			}
		}
		if m.Web != nil {
			if o.HTTPListener == nil {
				return nil, fmt.Errorf("%s serves HTTP, but the process has no HTTP listener", m.Name)
			}
			site, err := m.Web(runCtx, c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, err)
			}
			h.sites = append(h.sites, site)
		}
	}

	mountOps := func(mux *http.ServeMux) { ops.Mount(mux, h.Ready, o.Profiler) }
	if o.OpsAddr != "" {
		lis, err := h.listen("ops", o.OpsAddr, ops.AddrVar)
		if err != nil {
			return nil, err
		}
		h.ops = &http.Server{Handler: ops.Handler(h.Ready, o.Profiler), ReadHeaderTimeout: 5 * time.Second}
		h.serving.Go(func() { _ = h.ops.Serve(lis) })
		o.Log.Info("ops listening", "addr", lis.Addr().String())
		mountOps = func(*http.ServeMux) {}
	}
	if o.HTTPListener != nil {
		h.serveHTTP(mountOps)
	}
	return h, nil
}

// listenAll listens for every module that serves gRPC and connects to each, with and without the
// service token (through its Local when InProcess). dial reaches a module by name: one of these,
// or one elsewhere through Remote.
func (h *Host) listenAll(modules []module.Module) (map[string]net.Listener, func(name string, service bool) (grpc.ClientConnInterface, error), map[string]*grpcx.Local, error) {
	o := h.opts
	inProcess := o.InProcess && o.TLS == nil
	listeners := map[string]net.Listener{}
	serviceConns, edgeConns := conns{}, conns{}
	locals := map[string]*grpcx.Local{}
	for _, m := range modules {
		if m.Build == nil {
			continue
		}
		addr, ok := o.GRPCAddrs[m.Name]
		if !ok {
			addr = m.DefaultAddr
		}
		variable, ok := o.GRPCAddrVars[m.Name]
		if !ok {
			variable = m.GRPCAddrVar()
		}
		lis, err := h.listen(m.Name, addr, variable)
		if err != nil {
			return nil, nil, nil, err
		}
		listeners[m.Name] = lis
		h.Addrs[m.Name] = lis.Addr().String()
		// Modules call each other with the service token; the edge forwards callers' credentials
		// only, so no REST request ever runs as a Berth service.
		if serviceConns[m.Name], err = h.dial(h.Addrs[m.Name], o.ServiceToken); err != nil {
			return nil, nil, nil, err
		}
		if edgeConns[m.Name], err = h.dial(h.Addrs[m.Name], ""); err != nil {
			return nil, nil, nil, err
		}
		if inProcess {
			locals[m.Name] = grpcx.NewLocal()
			serviceConns[m.Name] = locals[m.Name].Conn(serviceConns[m.Name], o.ServiceToken)
			edgeConns[m.Name] = locals[m.Name].Conn(edgeConns[m.Name], "")
		}
	}
	dial := func(name string, service bool) (grpc.ClientConnInterface, error) {
		local := edgeConns
		if service {
			local = serviceConns
		}
		if c, ok := local[name]; ok {
			return c, nil
		}
		if o.Remote == nil {
			return nil, fmt.Errorf("no module %q in this process", name)
		}
		return o.Remote(name, service)
	}
	return listeners, dial, locals, nil
}

// serve builds module m's process, serves its gRPC on lis and runs its background work until
// runCtx ends.
func (h *Host) serve(ctx, runCtx context.Context, m module.Module, c module.Common, lis net.Listener) error {
	proc, err := m.Build(ctx, c)
	if err != nil {
		return config.Within(m.Name, err)
	}
	h.procs = append(h.procs, proc)
	h.serving.Go(func() {
		if err := proc.GRPC().Serve(lis); err != nil {
			h.fail(fmt.Errorf("%s: serve: %w", m.Name, err))
		}
	})
	h.work.Go(func() {
		if err := proc.Run(runCtx); err != nil {
			h.fail(fmt.Errorf("%s: background work: %w", m.Name, err))
		}
	})
	h.opts.Log.Info("listening", "service", m.Name, "addr", h.Addrs[m.Name])
	return nil
}

// serveHTTP serves the ops endpoints (through mountOps) and the modules' sites on the HTTP
// listener: each site registers its paths, then each wraps the whole handler and the listener as
// it asks.
func (h *Host) serveHTTP(mountOps func(*http.ServeMux)) {
	mux := http.NewServeMux()
	mountOps(mux)
	var handler http.Handler = mux
	lis := h.opts.HTTPListener
	for _, s := range h.sites {
		if s.Register != nil {
			s.Register(mux)
		}
	}
	for _, s := range h.sites {
		if s.Front != nil {
			handler = s.Front(handler)
		}
		if s.Listener != nil {
			lis = s.Listener(lis)
		}
	}
	h.http = NewHTTPServer(handler)
	h.serving.Go(func() {
		if err := h.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.fail(fmt.Errorf("http: serve: %w", err))
		}
	})
	h.opts.Log.Info("http listening", "addr", lis.Addr().String())
}

// Run runs modules until ctx ends or one of them fails (Start, Wait), then stops them (Close): the
// body of every production process.
func Run(ctx context.Context, modules []module.Module, o Options) error {
	h, err := Start(ctx, modules, o)
	if err != nil {
		return err
	}
	defer h.Close()
	err = h.Wait(ctx)
	h.opts.Log.Info("stopping")
	return err
}

// NewHTTPServer is the server every Berth process serves HTTP with: bounded header, body and idle
// times, so a slow or idle client cannot hold a connection open for ever, with room for a long
// analytics list to stream.
func NewHTTPServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
}

// Wait returns when ctx ends (nil) or when a module's background work or a server stops with an
// error: a lost durable consumer ends the process, so that its next start creates the durable
// again.
func (h *Host) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-h.failed:
		return err
	}
}

// fail reports a failure to Wait, unless the host is stopping anyway.
func (h *Host) fail(err error) {
	select {
	case h.failed <- err:
	default:
	}
}

// Ready reports the first module that is not ready, or nil.
func (h *Host) Ready(ctx context.Context) error {
	for _, p := range h.procs {
		if err := p.Ready(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the HTTP server first (no new requests), then the sites' background work, drains the
// gRPC servers (in-flight calls finish, for at most ShutdownGrace), waits for every module's
// background work (relays, consumers) to finish what it holds, and only then closes the modules'
// databases and the connections: closing those first would cut off work still in flight. An event
// cut short is not acknowledged and comes back to another replica; outbox rows a late call commits
// wait for the next relay.
func (h *Host) Close() {
	h.once.Do(h.close)
}

func (h *Host) close() {
	if h.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		_ = h.http.Shutdown(ctx)
		cancel()
	}
	for i := len(h.sites) - 1; i >= 0; i-- {
		if stop := h.sites[i].Stop; stop != nil {
			stop()
		}
	}
	drained := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, p := range h.procs {
			wg.Go(p.GRPC().GracefulStop)
		}
		wg.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(ShutdownGrace):
		for _, p := range h.procs {
			p.GRPC().Stop()
		}
	}
	h.cancel()
	h.work.Wait()
	// Nobody waits any more: a module whose background work failed while stopping is worth a line,
	// not a silent drop.
	for len(h.failed) > 0 {
		h.opts.Log.Warn("background work failed while stopping", "error", (<-h.failed).Error())
	}
	for _, p := range h.procs {
		p.Close()
	}
	if h.ops != nil {
		_ = h.ops.Close()
	}
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	h.serving.Wait()
}

func (h *Host) listen(owner, addr, variable string) (net.Listener, error) {
	ln, err := Listen(owner, addr, variable)
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, func() { _ = ln.Close() })
	return ln, nil
}

func (h *Host) dial(addr, serviceToken string) (*grpc.ClientConn, error) {
	conn, err := grpcx.Dial(addr, serviceToken, h.opts.TLS)
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, func() { _ = conn.Close() })
	return conn, nil
}
