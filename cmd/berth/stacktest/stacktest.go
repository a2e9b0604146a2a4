// Package stacktest starts the whole stack for tests that drive it from outside: the contract tests
// (REST edge, memory and Postgres), the hosted login page driven in Chromium, the published web
// client SDK run in Node. It runs the all-in-one process on free ports with every module of
// allinone.Modules, and provisions one app through the admin APIs, exactly as an operator would.
package stacktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Env is a running stack and the app provisioned on it.
type Env struct {
	Stack        *allinone.Stack
	App          seed.Demo
	Admin        seed.Admin // the admin APIs, authenticated with AdminToken
	AdminToken   string
	ServiceToken string
}

// Options say how to start the stack.
type Options struct {
	Issuer string // `iss` of the tokens the stack issues
	// RedirectURI is the provisioned apps' only redirect URI and payment return URL; "" gives them
	// the run's own development pages (allinone.Stack.DemoOptions), as make run does.
	RedirectURI string
	// Postgres gives every module of allinone.Modules a fresh database of its own (pgtest); false
	// runs them on memory stores.
	Postgres bool
	// TLS runs the modules' gRPC over TLS (grpcx.TLS from a CA's files, e.g. pkg/testkit/tlstest);
	// nil is plaintext.
	TLS *grpcx.TLS
	// Log receives every process's log; nil discards it.
	Log *slog.Logger
	// ExampleDir is the example app's folder with the browser SDK installed (allinone.Example);
	// when set, the app's redirect URIs include the example's page. "" leaves the page without
	// its files.
	ExampleDir string
	// EmailVerification is the provisioned apps' policy. "" makes it optional: most suites are
	// about what follows a sign-up, which the required policy puts behind a mail; the tests of
	// that flow pass "required" (make run's default).
	EmailVerification string
	// Localhost serves the stack as http://localhost:<port> (its public URL too), which browsers
	// accept as a passkey's relying party; 127.0.0.1 they refuse.
	Localhost bool
}

// Start brings up the stack with tokens issued as issuer and provisions an app (with keys, a
// tenant and users) whose only redirect URI is redirectURI, on memory stores.
func Start(t testing.TB, issuer, redirectURI string) Env {
	t.Helper()
	return StartWith(t, Options{Issuer: issuer, RedirectURI: redirectURI})
}

// StartWith starts the stack as o says. Every address is a free port, every secret random, the
// event streams prefixed per stack; TEST_NATS_URL selects an external JetStream server. The stack
// stops when the test ends.
func StartWith(t testing.TB, o Options) Env {
	t.Helper()
	ctx := context.Background()
	cfg := allinone.Config{
		HTTPAddr:  "127.0.0.1:0",
		GRPCAddrs: map[string]string{},
		Env: config.Overlay(func(string) string { return "" }, map[string]string{
			"BERTH_ISSUER":         o.Issuer,
			"BERTH_API_KEY_PEPPER": RandomHex(16),
			"BERTH_SECRET_KEY":     RandomHex(32),
			"BERTH_CONSOLE_KEY":    RandomHex(32),
		}),
		NATSURL:      os.Getenv("TEST_NATS_URL"),
		EventPrefix:  "stack" + RandomHex(4),
		AdminToken:   RandomHex(16),
		ServiceToken: RandomHex(16),
		// A provider minute of webhook retries lasts 6 ms: a refused delivery comes again
		// within the test.
		SandboxTimeScale: 0.0001,
		Log:              o.Log,
		TLS:              o.TLS,
		ExampleDir:       o.ExampleDir,
	}
	if o.Localhost {
		cfg.HTTPAddr = "localhost:0"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	for _, m := range allinone.Modules {
		cfg.GRPCAddrs[m.Name] = "127.0.0.1:0"
	}
	if o.Postgres {
		// pgtest clones a template per name; the modules migrate their fresh database themselves.
		noMigrations := func(context.Context, *pgxpool.Pool) error { return nil }
		cfg.DatabaseURLs = map[string]string{}
		for _, m := range allinone.Modules {
			cfg.DatabaseURLs[m.Name] = pgtest.URL(t, "stack-"+m.Name, noMigrations)
		}
	}
	if cfg.NATSURL != "" {
		natstest.DeleteStreamsAtCleanup(t, cfg.NATSURL, cfg.EventPrefix)
	}
	s, err := allinone.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	t.Cleanup(s.Close)

	dial := func(addr string) *grpc.ClientConn {
		c, err := grpc.NewClient(addr, append(grpcx.ClientOptions("", s.TLS), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(cfg.AdminToken)))...)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// The console's own calls carry the service token (and, over TLS, the client certificate that
	// service calls need).
	dialService := func(addr string) *grpc.ClientConn {
		c, err := grpc.NewClient(addr, grpcx.ClientOptions(cfg.ServiceToken, s.TLS)...)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	env := Env{Stack: s, AdminToken: cfg.AdminToken, ServiceToken: cfg.ServiceToken, Admin: seed.Admin{
		Identity: identityv1.NewIdentityAdminServiceClient(dial(s.Addr("identity"))),
		Tenant:   tenantv1.NewTenantAdminServiceClient(dial(s.Addr("tenant"))),
		Billing:  billingv1.NewBillingAdminServiceClient(dial(s.Addr("billing"))),
		Members:  identityv1.NewMemberServiceClient(dialService(s.Addr("identity"))),
	}}
	seedCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	opts := s.DemoOptions(o.RedirectURI)
	opts.EmailVerification = o.EmailVerification
	if opts.EmailVerification == "" {
		opts.EmailVerification = "optional"
	}
	if o.ExampleDir == "" {
		opts.ExampleURI = "" // no example app to sign in to
	}
	if env.App, err = seed.Run(seedCtx, env.Admin, opts); err != nil {
		t.Fatalf("provision app: %v", err)
	}
	s.ShowDemo(env.App)
	return env
}

// DatabaseServer answers a BERTH_DATABASE_URL for the all-in-one's own handling of its databases:
// a database name of its own on the test server (pgtest.FindServer), under which the modules'
// databases (<name>_identity, ...) are dropped when the test ends.
func DatabaseServer(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	server, stop, err := pgtest.FindServer(ctx)
	if err != nil {
		Unavailable(t, "no PostgreSQL: %v", err)
	}
	if stop != nil {
		t.Cleanup(stop)
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	name := "aio_" + RandomHex(4)
	t.Cleanup(func() {
		admin := *u
		admin.Path = "/postgres"
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			t.Errorf("drop the test's databases: %v", err)
			return
		}
		defer func() { _ = conn.Close(ctx) }()
		for _, m := range allinone.Modules {
			if _, err := conn.Exec(ctx, "drop database if exists "+pgx.Identifier{name + "_" + m.Name}.Sanitize()+" with (force)"); err != nil {
				t.Errorf("drop %s_%s: %v", name, m.Name, err)
			}
		}
	})
	u.Path = "/" + name
	return u.String()
}

// RandomHex returns n random bytes as hex, for unique emails, states and prefixes.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Unavailable ends a test whose external tool (a browser, Node) is missing: a skip on a developer
// machine, a failure under CI=true, where a silently skipped end-to-end test would hide breakage.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// NpmCI copies the folder src (without its node_modules) to a temporary directory and installs
// the packages its package-lock.json pins there with npm ci, so a test never writes a node_modules
// into the repository. It returns the directory. Without node or npm the test ends as
// Unavailable says.
func NpmCI(t testing.TB, src string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			Unavailable(t, "%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path) // path is under src
		if d.IsDir() {
			if d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in a copy of %s: %v\n%s", src, err, out)
	}
	return dir
}
