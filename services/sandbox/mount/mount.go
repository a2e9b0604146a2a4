package mount

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/delivery"
	"github.com/berthhq/berth/services/sandbox/idp"
	"github.com/berthhq/berth/services/sandbox/pspx"
	"github.com/berthhq/berth/services/sandbox/pspy"
)

// Paths of the sandboxes under the address they are mounted on.
const (
	PspxPath       = "/_sandbox/pspx"
	PspyPath       = "/_sandbox/pspy"
	IdpPath        = "/_sandbox/idp"
	ClockPath      = "/_sandbox/clock/advance"
	FaultsPath     = "/_sandbox/faults"
	DeliveriesPath = "/_sandbox/deliveries"
)

// Options tune the sandboxes; the zero value is the providers' own behaviour.
type Options struct {
	// TimeScale multiplies the waits of the providers' webhook retry schedules (0 means 1):
	// 0.0001 makes pspx's first retry, a minute after the first attempt, come after 6 ms.
	TimeScale float64
}

// Settings are the sandbox process's (cmd/sandbox); the all-in-one reads TimeScaleSetting too.
var Settings = []config.Setting{
	{Name: "BERTH_SANDBOX_ADDR", Kind: config.Addr, Default: "127.0.0.1:8090", Doc: "where the sandboxes listen"},
	{Name: "BERTH_SANDBOX_PUBLIC_URL", Kind: config.URL, Doc: "the URL browsers reach the sandboxes at (unset: http://<listen address>)"},
	TimeScaleSetting,
	logx.LevelSetting,
	logx.FormatSetting,
}

// TimeScaleSetting multiplies the waits of the sandboxes' webhook retry schedules (Options.TimeScale).
var TimeScaleSetting = config.Setting{Name: "BERTH_SANDBOX_TIME_SCALE", Kind: config.Factor, Default: "1",
	Doc: "factor on the sandboxes' webhook retry schedules: 0.0001 makes pspx's one-minute first retry come after 6 ms"}

// Sandboxes are both payment providers and the identity providers on one clock, the payment
// providers delivering their webhooks through one queue.
type Sandboxes struct {
	Clock      *clock.Clock
	Pspx       *pspx.Server
	Pspy       *pspy.Server
	Idp        *idp.Server
	Deliveries *delivery.Queue // WaitIdle waits until every webhook is delivered or given up
	PspxURL    string          // the pspx API base URL, for billing and for people integrating
	PspyURL    string
	IdpURL     string // the identity providers' base URL: provider idpA's issuer is IdpURL + "/idpA"
}

// New builds the sandboxes for the public base URL they will be reachable at (their hosted pages
// link to it), with the providers' own retry pace.
func New(baseURL string, log *slog.Logger) *Sandboxes {
	return NewWithOptions(baseURL, log, Options{})
}

// NewWithOptions is New with options. Close stops the webhook deliveries it starts.
func NewWithOptions(baseURL string, log *slog.Logger, o Options) *Sandboxes {
	base := strings.TrimRight(baseURL, "/")
	c := clock.New()
	q := delivery.New(delivery.Config{TimeScale: o.TimeScale, Log: log.With("sandbox", "delivery")})
	s := &Sandboxes{Clock: c, Deliveries: q, PspxURL: base + PspxPath, PspyURL: base + PspyPath, IdpURL: base + IdpPath}
	s.Pspx = pspx.New(pspx.Config{Clock: c, BaseURL: s.PspxURL, Log: log.With("sandbox", "pspx"), Deliveries: q})
	s.Pspy = pspy.New(pspy.Config{Clock: c, BaseURL: s.PspyURL, Log: log.With("sandbox", "pspy"), Deliveries: q})
	s.Idp = idp.New(idp.Config{Clock: c, BaseURL: s.IdpURL, Log: log.With("sandbox", "idp")})
	return s
}

// Close stops the webhook deliveries, cancelling attempts in flight, and waits for them.
func (s *Sandboxes) Close() { s.Deliveries.Close() }

// Module serves the sandboxes as a module of a host (pkg/host): their paths on the host's HTTP
// listener, and their webhook deliveries stopped once that listener takes no more requests, before
// the services the deliveries call stop. The sandboxes are built beforehand (NewWithOptions), for
// the URL browsers reach them at, which may not be the listener's.
func (s *Sandboxes) Module() module.Module {
	return module.Module{Name: "sandbox", Web: func(context.Context, module.Common) (*module.Site, error) {
		return &module.Site{Register: s.Register, Stop: s.Close}, nil
	}}
}

// Register mounts the sandboxes and their controls (clock, faults, deliveries log) on mux. The
// identity providers serve their own page at their base URL.
func (s *Sandboxes) Register(mux *http.ServeMux) {
	// {$}: only the base URL itself is the page; every API path stays the provider's.
	mux.HandleFunc("GET "+PspxPath+"/{$}", serveIndex(index{Name: "pspx", Base: s.PspxURL,
		API: "form-encoded requests with the account's secret key as the bearer token, JSON answers",
		Calls: []string{"/v1/customers", "/v1/products", "/v1/prices", "/v1/tax_rates", "/v1/checkout/sessions",
			"/v1/subscriptions", "/v1/invoices", "/v1/invoiceitems", "/v1/payment_intents", "/v1/events", "/v1/webhook_endpoints"},
		Pay: "enters card 4242 4242 4242 4242 to pay, or 4000 0000 0000 0341 for a card whose charges are declined"}))
	mux.HandleFunc("GET "+PspyPath+"/{$}", serveIndex(index{Name: "pspy", Base: s.PspyURL,
		API:   "JSON requests with the account's key as the bearer token, JSON answers",
		Calls: []string{"/v2/customers", "/v2/payments", "/v2/customers/<id>/mandates", "/v2/customers/<id>/subscriptions"},
		Pay:   "chooses the payment's outcome (paid, failed, canceled, ...)"}))
	mux.Handle(PspxPath+"/", http.StripPrefix(PspxPath, s.Pspx))
	mux.Handle(PspyPath+"/", http.StripPrefix(PspyPath, s.Pspy))
	mux.Handle(IdpPath+"/", http.StripPrefix(IdpPath, s.Idp))
	mux.Handle(ClockPath, s.Clock.Handler())
	mux.Handle(FaultsPath, s.Deliveries.FaultsHandler())
	mux.Handle(DeliveriesPath, s.Deliveries.DeliveriesHandler())
}
