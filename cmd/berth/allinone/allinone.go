package allinone

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// Config is the all-in-one configuration (FromSettings makes it from the environment).
type Config struct {
	HTTPAddr string // REST edge; "127.0.0.1:0" picks a free port
	// GRPCAddrs is where each module serves gRPC (for berthctl and internal callers), by module
	// name; a module missing here listens on its DefaultAddr.
	GRPCAddrs map[string]string
	// DatabaseURLs is each module's own PostgreSQL database, by module name; a module missing here
	// runs on memory stores.
	DatabaseURLs map[string]string
	// Env holds the modules' own settings (identity's pepper, secret key, issuer, the edge's trusted
	// proxies, ...). The edge's public URL, BERTH_PUBLIC_URL, defaults to the address the edge
	// listens on.
	Env          config.Env
	NATSURL      string // "" = embedded JetStream server
	EventPrefix  string // stream/subject prefix; "" = "berth"
	AdminToken   string
	ServiceToken string
	// TLS carries the gRPC between the modules and from the edge over TLS, service calls with
	// mutual TLS; nil is plaintext (the default of make run).
	TLS *grpcx.TLS
	// SandboxTimeScale multiplies the waits of the sandboxes' webhook retry schedules (0 means
	// 1): tests shrink a provider's minutes to milliseconds.
	SandboxTimeScale float64
	// Profiler serves the Go profiler at /debug/pprof/ on the edge's address (BERTH_PPROF).
	Profiler bool
	// ExampleDir is the example app's folder (BERTH_EXAMPLE_DIR), served at ExamplePath.
	ExampleDir string
	// Settings are the all-in-one's own parsed settings (FromSettings), for its main.
	Settings config.Values
	Log      *slog.Logger
}

// Stack is a running all-in-one process: a host (pkg/host) with every module of Modules, the
// development pages, the sandboxes and the edge (Sites), on embedded NATS unless told otherwise.
type Stack struct {
	BaseURL string            // http://<edge address>
	Addrs   map[string]string // module name -> gRPC address it serves on
	TLS     *grpcx.TLS        // what a client of those addresses needs (Config.TLS)
	Bus     events.Bus
	// Mailbox receives every email the run sends (referral invites, email-change mails); /dev/mailbox
	// shows it.
	Mailbox *mail.Mailbox
	// Sandboxes are the provider sandboxes served on the edge's address, which billing calls.
	Sandboxes *mount.Sandboxes
	// Example is the example app's page (ExamplePath); it works once told its app (Example.Use).
	Example *Example
	// DatabaseURLs are the modules' databases (Config.DatabaseURLs; memory stores where absent).
	DatabaseURLs map[string]string

	host     *host.Host
	closeBus func()
	demo     demoBoard // what the development pages show of the seeded demo
}

// ShowDemo hands the seeded demo to the development pages: the landing page lists it, the
// payment return page reads its tenants with its keys, and the example app signs users in to its
// first app.
func (s *Stack) ShowDemo(d seed.Demo) {
	s.demo.Store(&d)
	s.Example.Use(d.AppID)
}

// DemoOptions are the seed's options for this stack. A redirectURI "" gives the demo apps the
// run's own development pages: DevCallbackPath to sign in to and DevPaidPath to return to after
// paying; otherwise the apps sign in and return to redirectURI.
func (s *Stack) DemoOptions(redirectURI string) seed.Options {
	o := seed.Options{BaseURL: s.BaseURL, RedirectURI: redirectURI,
		Sandbox: seed.Sandbox{Pspx: s.Sandboxes.PspxURL, Pspy: s.Sandboxes.PspyURL, Idp: s.Sandboxes.IdpURL}}
	if redirectURI == "" {
		o.RedirectURI, o.PaidURL = s.BaseURL+DevCallbackPath, s.BaseURL+DevPaidPath
	}
	o.ExampleURI = s.BaseURL + ExamplePath
	o.Invitation = s.invitation
	return o
}

// invitation is the token of the newest console invitation the mailbox holds for email.
func (s *Stack) invitation(email string) (string, error) {
	for _, m := range s.Mailbox.Messages() {
		if tok := seed.InvitationToken(m.Text); m.To == email && tok != "" {
			return tok, nil
		}
	}
	return "", fmt.Errorf("no console invitation to %s in the mailbox", email)
}

// Addr is the gRPC address of the named module.
func (s *Stack) Addr(module string) string { return s.Addrs[module] }

// Start brings every module of Modules up and returns once the edge accepts connections.
func Start(ctx context.Context, cfg Config) (_ *Stack, err error) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	s := &Stack{TLS: cfg.TLS, DatabaseURLs: cfg.DatabaseURLs, Mailbox: mail.NewMailbox(log.With("service", "mailbox")),
		Example: &Example{dir: cfg.ExampleDir}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.Bus, s.closeBus, err = host.ConnectBus(ctx, cfg.NATSURL, cfg.EventPrefix); err != nil {
		return nil, err
	}
	// The edge listens first: the modules' settings (their public URL, the sandboxes' URLs) follow
	// from its address.
	edgeLn, err := host.Listen(edge.Module.Name, cfg.HTTPAddr, edge.HTTPAddrSetting.Name)
	if err != nil {
		return nil, err
	}
	s.BaseURL = "http://" + publicAddr(cfg.HTTPAddr, edgeLn.Addr())
	env := cfg.Env
	if env == nil {
		env = config.OS
	}
	settings, err := moduleSettings(env, s.BaseURL)
	if err != nil {
		_ = edgeLn.Close()
		return nil, err
	}
	public, err := config.Parse(config.Overlay(env, map[string]string{module.PublicURLSetting.Name: s.BaseURL}), []config.Setting{module.PublicURLSetting})
	if err != nil {
		_ = edgeLn.Close()
		return nil, err
	}
	publicURL := public.String(module.PublicURLSetting.Name)
	// The sandboxes' pages are opened by browsers (public URL); billing calls their APIs over the
	// loopback address, which works whatever proxy stands in front of the public one.
	s.Sandboxes = mount.NewWithOptions(publicURL, log, mount.Options{TimeScale: cfg.SandboxTimeScale})
	s.host, err = host.Start(ctx, append(slices.Clone(Modules), Sites(publicURL, s.Mailbox, s.Example, s.Sandboxes, &s.demo)...), host.Options{
		Log: log, Bus: s.Bus, Settings: settings, DatabaseURLs: cfg.DatabaseURLs, GRPCAddrs: cfg.GRPCAddrs,
		AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken, TLS: cfg.TLS, Mailer: s.Mailbox,
		InProcess: true, Profiler: cfg.Profiler, HTTPListener: edgeLn,
	})
	if err != nil {
		return nil, err
	}
	s.Addrs = s.host.Addrs
	return s, nil
}

// Sites are the all-in-one's modules that serve HTTP only, beside Modules: the development pages
// (at base, with mailbox's messages, the example app and the demo once seeded), the provider
// sandboxes sb, and the edge, which takes every other path.
func Sites(base string, mailbox *mail.Mailbox, example *Example, sb *mount.Sandboxes, demo *demoBoard) []module.Module {
	return []module.Module{devPages(base, mailbox, example, demo), sb.Module(), edge.Module}
}

// Wait returns when ctx ends or a module's background work fails (host.Host.Wait).
func (s *Stack) Wait(ctx context.Context) error { return s.host.Wait(ctx) }

// Ready reports the first module that is not ready, or nil (the all-in-one's /readyz).
func (s *Stack) Ready(ctx context.Context) error { return s.host.Ready(ctx) }

// Close stops the host (the HTTP listener, the sandboxes' deliveries, the modules, in that order)
// and then NATS. The sandboxes stop here too when the host never started (closing them twice is
// harmless).
func (s *Stack) Close() {
	if s.host != nil {
		s.host.Close()
	}
	if s.Sandboxes != nil {
		s.Sandboxes.Close()
	}
	if s.closeBus != nil {
		s.closeBus()
	}
}

// publicAddr is how pages and mails name the edge: a configured "localhost" stays a name, since
// browsers bind passkeys to a host name and refuse an IP address; any other address is the
// listener's.
func publicAddr(configured string, ln net.Addr) string {
	host, _, err := net.SplitHostPort(configured)
	_, port, perr := net.SplitHostPort(ln.String())
	if err == nil && perr == nil && host == "localhost" {
		return net.JoinHostPort(host, port)
	}
	return ln.String()
}
