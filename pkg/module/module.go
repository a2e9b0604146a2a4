package module

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/mail"
)

// Module is one bounded context as the template composes it.
type Module struct {
	// Name is the context's lower-case name. Settings and databases derive from it: AddrVar,
	// GRPCAddrVar, DatabaseName.
	Name string
	// DefaultAddr is where the production binary serves gRPC when BERTH_GRPC_ADDR is unset.
	DefaultAddr string
	// Build makes the module's process from the shared settings. It opens (and migrates) the
	// database when c.DatabaseURL is set, and picks memory stores otherwise.
	Build func(ctx context.Context, c Common) (*Process, error)
	// Migrate brings the module's database to the schema this build needs (forward-only, under
	// an advisory lock); Build runs it too, and a deployment's migration step runs it alone
	// (svcmain's "migrate" command) before the new version's processes start.
	Migrate func(ctx context.Context, pool *pgxpool.Pool) error
	// Settings are the module's own environment variables: the host parses them with its own
	// before anything starts and hands the values to Build (Common.Settings); the configuration
	// reference is generated from them.
	Settings []config.Setting
	// Peers are the modules Build and Web dial (Common.Dial, Common.Forward): a production process
	// needs each one's address (AddrVar) and refuses to start without it.
	Peers []string
	// Web, when set, is what the module serves over HTTP on its host's HTTP listener: the REST edge,
	// the provider sandboxes, the all-in-one's development pages. A module has Build (a gRPC server
	// and background work), Web, or both; one with Web only has no gRPC listener.
	Web func(ctx context.Context, c Common) (*Site, error)
}

// Site is a module's part of its host's HTTP server.
type Site struct {
	// Register adds the module's paths to the host's mux. The host registers its ops endpoints
	// first, then each module's site in the module list's order; a site at "/" (the edge) takes
	// every path no other claims.
	Register func(mux *http.ServeMux)
	// Front, when set, wraps the whole handler: the edge answers, in its envelope families, the
	// paths a ServeMux would redirect instead of routing.
	Front func(site http.Handler) http.Handler
	// Listener, when set, wraps the HTTP listener: the edge answers, in its families, the requests
	// Go's server refuses before any handler sees them.
	Listener func(net.Listener) net.Listener
	// Stop ends the site's background work once the HTTP server takes no more requests and before
	// the gRPC servers drain (the sandboxes' webhook deliveries, which call the services).
	Stop func()
}

// PeerSettings declares the address variable of each module m calls.
func (m Module) PeerSettings() []config.Setting {
	var s []config.Setting
	for _, p := range m.Peers {
		s = append(s, config.Setting{Name: AddrVar(p), Kind: config.Text, Required: true, Check: grpcx.CheckTarget,
			Doc: fmt.Sprintf("where the %s service's gRPC servers are, which %s calls: host:port (resolved through DNS) or its replicas' host:port separated by commas", p, m.Name)})
	}
	return s
}

// PublicURLSetting is the REST edge's public base URL, which the modules that put links in pages,
// mails and provider calls read.
var PublicURLSetting = config.Setting{Name: "BERTH_PUBLIC_URL", Kind: config.URL,
	Doc: "the REST edge's public base URL (https://…), as browsers and providers reach it"}

// AddrVar is the variable that tells other processes where the module's gRPC server is
// (BERTH_IDENTITY_ADDR for identity).
func (m Module) AddrVar() string { return AddrVar(m.Name) }

// GRPCAddrVar is the variable of the address the all-in-one process serves the module's gRPC on
// (BERTH_IDENTITY_GRPC_ADDR), for berthctl and internal callers.
func (m Module) GRPCAddrVar() string { return "BERTH_" + strings.ToUpper(m.Name) + "_GRPC_ADDR" }

// AddrVar is the variable naming where module name's gRPC server is reached.
func AddrVar(name string) string { return "BERTH_" + strings.ToUpper(name) + "_ADDR" }

// Common is what every module is built from.
type Common struct {
	// DatabaseURL is the module's own PostgreSQL database; "" selects memory stores, which only
	// the all-in-one process does.
	DatabaseURL  string
	Bus          events.Bus
	AdminToken   string // provisioning calls ("" disables them)
	ServiceToken string // calls between Berth services
	Log          *slog.Logger
	Clock        func() time.Time // nil = time.Now
	// Settings are the module's own settings (Module.Settings), parsed and checked by the host:
	// the environment in production, with the all-in-one's generated defaults laid over it there.
	Settings config.Values
	// Dial reaches another module's gRPC server by name; its calls carry the service token.
	Dial func(name string) (grpc.ClientConnInterface, error)
	// Forward reaches another module's gRPC server by name without the service token: what the
	// edge forwards carries its callers' credentials only, so no REST request runs as a service.
	Forward func(name string) (grpc.ClientConnInterface, error)
	// BaseURL is where the host's HTTP listener is reached (http://host:port), for a site whose
	// pages link to themselves; "" when the process serves no HTTP.
	BaseURL string
	// TLS is the deployment's gRPC transport security (nil: plaintext). The process serves with
	// it and requires service calls to present a certificate its CA signed.
	TLS *grpcx.TLS
	// Mailer sends the process's email; nil lets a module that sends mail configure SMTP from Env.
	Mailer mail.Sender
	// Local, when set, also holds the module's unary methods for callers in the same process
	// (grpcx.Local): the all-in-one's edge and modules then call it without the network.
	Local *grpcx.Local
}

// Logger is c.Log, or the default logger when none is set.
func (c Common) Logger() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// DatabaseName returns the URL of the module's own database on base's server: "<db>_<name>", db
// being base's database ("berth" when base names none), so that each context owns a database even
// when they share one server.
func DatabaseName(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("database URL is not a URL")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "berth"
	}
	u.Path = "/" + db + "_" + name
	return u.String(), nil
}
