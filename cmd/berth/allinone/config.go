package allinone

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/services/sandbox/mount"
	"github.com/jackc/pgx/v5"
)

// DefaultIssuer is the issuer id the published browser SDK has built in; the all-in-one run uses it
// so that the SDK works against it unchanged. A production deployment sets its own BERTH_ISSUER.
const DefaultIssuer = "f0af4569-4d5d-4c20-af95-5a80c74e30a6"

// FromEnv reads the all-in-one configuration:
//
//	BERTH_HTTP_ADDR            REST edge address (127.0.0.1:8080)
//	BERTH_<NAME>_GRPC_ADDR     where module <name> serves gRPC (its DefaultAddr: identity
//	                           127.0.0.1:9101, tenant 127.0.0.1:9102, analytics 127.0.0.1:9103)
//	BERTH_DATABASE_URL         Postgres server; each module gets its own database on it
//	                           (<db>_identity, <db>_tenant, ..., created when missing).
//	                           Unset: memory stores.
//	BERTH_TRUSTED_PROXIES      reverse proxies (addresses, CIDRs) whose X-Forwarded-For is believed
//	BERTH_NATS_URL             external NATS JetStream; unset: embedded server
//	BERTH_ADMIN_TOKEN          provisioning token; unset: random per run
//	BERTH_SERVICE_TOKEN        service-to-service token; unset: random per run
//	BERTH_SANDBOX_TIME_SCALE   factor on the sandboxes' webhook retry schedules (default 1)
//	BERTH_GRPC_TLS_CA, BERTH_GRPC_TLS_CERT, BERTH_GRPC_TLS_KEY
//	                           gRPC over TLS between the modules, from the edge and the demo seed
//	                           (grpcx.TLSFromEnv); unset: plaintext on loopback
//
// plus the modules' own settings, with these all-in-one defaults: BERTH_ISSUER DefaultIssuer,
// BERTH_PUBLIC_URL the edge's address, BERTH_API_KEY_PEPPER and BERTH_SECRET_KEY random per run.
//
// Secrets left unset are generated per run, which is only sound with memory stores: with a
// database they must survive restarts, so FromEnv refuses to invent them.
func FromEnv(ctx context.Context, log *slog.Logger) (Config, error) {
	cfg := Config{
		HTTPAddr:     config.String("BERTH_HTTP_ADDR", "127.0.0.1:8080"),
		GRPCAddrs:    map[string]string{},
		NATSURL:      config.String("BERTH_NATS_URL", ""),
		AdminToken:   config.String("BERTH_ADMIN_TOKEN", ""),
		ServiceToken: config.String("BERTH_SERVICE_TOKEN", ""),
		Log:          log,
	}
	for _, m := range Modules {
		cfg.GRPCAddrs[m.Name] = config.String(m.GRPCAddrVar(), m.DefaultAddr)
	}
	var err error
	if cfg.SandboxTimeScale, err = mount.ParseTimeScale(config.String("BERTH_SANDBOX_TIME_SCALE", "")); err != nil {
		return cfg, err
	}
	if cfg.TrustedProxies, err = login.ParseProxies(config.String("BERTH_TRUSTED_PROXIES", "")); err != nil {
		return cfg, fmt.Errorf("BERTH_TRUSTED_PROXIES: %w", err)
	}
	if cfg.TLS, err = grpcx.TLSFromEnv(config.OS); err != nil {
		return cfg, err
	}
	defaults := map[string]string{"BERTH_ISSUER": DefaultIssuer}
	if base := config.String("BERTH_DATABASE_URL", ""); base != "" {
		if config.String("BERTH_API_KEY_PEPPER", "") == "" || config.String("BERTH_SECRET_KEY", "") == "" {
			return cfg, errors.New("BERTH_DATABASE_URL needs BERTH_API_KEY_PEPPER and BERTH_SECRET_KEY (keys must outlive the process)")
		}
		cfg.DatabaseURLs = map[string]string{}
		for _, m := range Modules {
			if cfg.DatabaseURLs[m.Name], err = ServiceDatabase(ctx, base, m.Name); err != nil {
				return cfg, err
			}
		}
	} else {
		defaults["BERTH_API_KEY_PEPPER"] = randomHex(32)
		defaults["BERTH_SECRET_KEY"] = randomHex(32)
	}
	cfg.Env = config.Overlay(config.OS, defaults)
	if cfg.AdminToken == "" {
		cfg.AdminToken = randomHex(24)
	}
	if cfg.ServiceToken == "" {
		cfg.ServiceToken = randomHex(24)
	}
	return cfg, nil
}

// ServiceDatabase returns the URL of module's own database on base's server (module.DatabaseName),
// creating it when missing, so that each bounded context owns its own database even on one server.
func ServiceDatabase(ctx context.Context, base, name string) (string, error) {
	dbURL, err := module.DatabaseName(base, name)
	if err != nil {
		return "", fmt.Errorf("BERTH_DATABASE_URL: %w", err)
	}
	u, _ := url.Parse(dbURL)
	db := strings.TrimPrefix(u.Path, "/")
	// Connect to the server's maintenance database: the one named in base need not exist.
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			return "", fmt.Errorf("create database %s: %w", db, err)
		}
	}
	return dbURL, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
