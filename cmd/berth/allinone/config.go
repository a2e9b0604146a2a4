package allinone

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/ops"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/sandbox/mount"
	"github.com/jackc/pgx/v5"
)

// DefaultIssuer is the issuer id the published browser SDK has built in; the all-in-one run uses it
// so that the SDK works against it unchanged. A production deployment sets its own BERTH_ISSUER.
const DefaultIssuer = "f0af4569-4d5d-4c20-af95-5a80c74e30a6"

// Settings are the all-in-one process's own; the modules' settings (Module.Settings) come on top,
// with generated defaults (see FromEnv).
func Settings() []config.Setting {
	s := []config.Setting{
		edge.HTTPAddrSetting,
		{Name: "BERTH_DATABASE_URL", Kind: config.URL, Secret: true,
			Doc: "PostgreSQL server: each module gets its own database on it (<db>_identity, <db>_tenant, …, created when missing); unset: memory stores"},
		{Name: "BERTH_NATS_URL", Kind: config.Text, Check: natsx.CheckServers, Doc: "an external NATS JetStream server; unset: an embedded one"},
		events.PrefixSetting,
		{Name: "BERTH_ADMIN_TOKEN", Kind: config.Text, Secret: true, Doc: "bearer token of the provisioning calls (berthctl); unset: random per run, printed"},
		{Name: "BERTH_SERVICE_TOKEN", Kind: config.Text, Secret: true, Doc: "token the modules present to each other; unset: random per run"},
		mount.TimeScaleSetting,
		{Name: "BERTH_DEMO_DIR", Kind: config.Text, Default: seed.DefaultDir, Doc: "folder demo.json is written to (berthctl finds a running all-in-one through it)"},
		{Name: "BERTH_DEMO_REDIRECT_URI", Kind: config.URL, Doc: "the demo apps' redirect URI and payment return URL; unset: the run's own /dev/callback and /dev/paid pages"},
		{Name: "BERTH_EXAMPLE_DIR", Kind: config.Text, Default: "examples/webapp",
			Doc: "folder of the example app served at /dev/example; the browser SDK it loads is installed there with npm ci"},
		logx.LevelSetting,
		logx.FormatSetting,
		ops.PprofSetting,
	}
	for _, m := range Modules {
		s = append(s, config.Setting{Name: m.GRPCAddrVar(), Kind: config.Addr, Default: m.DefaultAddr,
			Doc: "where the " + m.Name + " module serves gRPC, for berthctl and internal callers"})
	}
	return append(s, grpcx.TLSSettings...)
}

// FromSettings makes the all-in-one configuration from its parsed Settings and checks every
// module's settings from the environment, with
// these all-in-one defaults: BERTH_ISSUER DefaultIssuer, BERTH_PUBLIC_URL the edge's address,
// BERTH_PSPX_URL and BERTH_PSPY_URL the sandboxes on it, BERTH_CONSOLE_KEY random per run, and on memory stores BERTH_API_KEY_PEPPER
// and BERTH_SECRET_KEY random per run. Secrets left unset are generated only on memory stores: with
// a database they must survive restarts, so the modules then require them. Nothing is created or
// started before every setting has passed.
func FromSettings(ctx context.Context, own config.Values, log *slog.Logger) (Config, error) {
	var err error
	cfg := Config{
		HTTPAddr:         own.String(edge.HTTPAddrSetting.Name),
		GRPCAddrs:        map[string]string{},
		NATSURL:          own.String("BERTH_NATS_URL"),
		EventPrefix:      own.String(events.PrefixSetting.Name),
		AdminToken:       own.String("BERTH_ADMIN_TOKEN"),
		ServiceToken:     own.String("BERTH_SERVICE_TOKEN"),
		SandboxTimeScale: own.Float(mount.TimeScaleSetting.Name),
		Profiler:         own.Bool(ops.PprofVar),
		ExampleDir:       own.String("BERTH_EXAMPLE_DIR"),
		Settings:         own,
		Log:              log,
	}
	for _, m := range Modules {
		cfg.GRPCAddrs[m.Name] = own.String(m.GRPCAddrVar())
	}
	if cfg.TLS, err = grpcx.TLSFromEnv(own.Env()); err != nil {
		return cfg, err
	}
	// The console's sessions live in one process here: a key of the run's own only signs its
	// members in again after a restart.
	defaults := map[string]string{"BERTH_ISSUER": DefaultIssuer, console.KeySetting.Name: randomHex(32)}
	base := own.String("BERTH_DATABASE_URL")
	if base == "" {
		defaults["BERTH_API_KEY_PEPPER"] = randomHex(32)
		defaults[sealbox.KeySetting.Name] = randomHex(32)
	}
	cfg.Env = config.Overlay(config.OS, defaults)
	// The edge's address stands in for the public URL it will have once it listens.
	if _, err := moduleSettings(cfg.Env, "http://"+cfg.HTTPAddr); err != nil {
		return cfg, err
	}
	if base != "" {
		if cfg.DatabaseURLs, err = moduleDatabases(ctx, base, log); err != nil {
			return cfg, err
		}
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = randomHex(24)
	}
	if cfg.ServiceToken == "" {
		cfg.ServiceToken = randomHex(24)
	}
	return cfg, nil
}

// moduleSettings parses the settings of every module of Modules and of the edge from env, with the
// all-in-one's own defaults for the URLs that follow from the edge's address (baseURL): the public
// URL and the sandboxes; and webhook endpoints on loopback allowed.
func moduleSettings(env config.Env, baseURL string) (map[string]config.Values, error) {
	// BERTH_OUTBOUND_ALLOW_PRIVATE: the all-in-one is where a newcomer points a webhook endpoint at
	// a receiver on their machine, so http and loopback are allowed here, never by default elsewhere.
	env = config.Overlay(env, map[string]string{module.PublicURLSetting.Name: baseURL,
		"BERTH_PSPX_URL": baseURL + mount.PspxPath, "BERTH_PSPY_URL": baseURL + mount.PspyPath,
		"BERTH_OUTBOUND_ALLOW_PRIVATE": "true"})
	values := map[string]config.Values{}
	var problems []error
	for _, m := range append(slices.Clone(Modules), edge.Module) {
		v, err := config.Parse(env, m.Settings)
		problems = append(problems, err)
		values[m.Name] = v
	}
	return values, config.Join(problems...)
}

// moduleDatabases finds or creates every module's database on base's server and says in one line
// which it uses and which it created, so a run on an unexpected server or database name shows.
func moduleDatabases(ctx context.Context, base string, log *slog.Logger) (map[string]string, error) {
	urls := map[string]string{}
	var using, created []string
	for _, m := range Modules {
		dbURL, isNew, err := ServiceDatabase(ctx, base, m.Name)
		if err != nil {
			return nil, err
		}
		urls[m.Name] = dbURL
		u, _ := url.Parse(dbURL) // ServiceDatabase parsed it
		db := strings.TrimPrefix(u.Path, "/")
		using = append(using, db)
		if isNew {
			created = append(created, db)
		}
	}
	if log == nil {
		log = slog.Default()
	}
	u, _ := url.Parse(urls[Modules[0].Name])
	log.Info("databases", "server", u.Host, "using", strings.Join(using, ", "), "created", strings.Join(created, ", "))
	return urls, nil
}

// ServiceDatabase returns the URL of module's own database on base's server (module.DatabaseName),
// creating it when missing (created), so that each bounded context owns its own database even on
// one server.
func ServiceDatabase(ctx context.Context, base, name string) (dbURL string, created bool, err error) {
	dbURL, err = module.DatabaseName(base, name)
	if err != nil {
		return "", false, fmt.Errorf("BERTH_DATABASE_URL: %w", err)
	}
	u, _ := url.Parse(dbURL)
	db := strings.TrimPrefix(u.Path, "/")
	// Connect to the server's maintenance database: the one named in base need not exist.
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return "", false, fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	defer func() { _ = conn.Close(ctx) }() // a maintenance connection: nothing is pending on it
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		return "", false, err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			return "", false, fmt.Errorf("create database %s: %w", db, err)
		}
	}
	return dbURL, !exists, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
