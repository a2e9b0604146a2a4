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
	"github.com/jackc/pgx/v5"
)

// DefaultIssuer is the issuer id the published browser SDK has built in; the all-in-one run uses it
// so that the SDK works against it unchanged. A production deployment sets its own BERTH_ISSUER.
const DefaultIssuer = "f0af4569-4d5d-4c20-af95-5a80c74e30a6"

// FromEnv reads the all-in-one configuration:
//
//	BERTH_HTTP_ADDR            REST edge address (127.0.0.1:8080)
//	BERTH_IDENTITY_GRPC_ADDR   identity gRPC address (127.0.0.1:9101)
//	BERTH_TENANT_GRPC_ADDR     tenant gRPC address (127.0.0.1:9102)
//	BERTH_ANALYTICS_GRPC_ADDR  analytics gRPC address (127.0.0.1:9103)
//	BERTH_DATABASE_URL         Postgres server; each service gets its own database on it
//	                           (<db>_identity, <db>_tenant, <db>_analytics, created when missing).
//	                           Unset: memory stores.
//	BERTH_ISSUER               `iss` of issued tokens (DefaultIssuer)
//	BERTH_PUBLIC_URL           the edge's public base URL (the listen address)
//	BERTH_TRUSTED_PROXIES      reverse proxies (addresses, CIDRs) whose X-Forwarded-For is believed
//	BERTH_NATS_URL             external NATS JetStream; unset: embedded server
//	BERTH_API_KEY_PEPPER       API-key HMAC pepper (hex/base64); required with a database
//	BERTH_SECRET_KEY           32-byte AES key for private keys at rest; required with a database
//	BERTH_ADMIN_TOKEN          provisioning token; unset: random per run
//	BERTH_SERVICE_TOKEN        service-to-service token; unset: random per run
//
// Secrets left unset are generated per run, which is only sound with memory stores: with a
// database they must survive restarts, so FromEnv refuses to invent them.
func FromEnv(ctx context.Context, log *slog.Logger) (Config, error) {
	cfg := Config{
		HTTPAddr:          config.String("BERTH_HTTP_ADDR", "127.0.0.1:8080"),
		IdentityGRPCAddr:  config.String("BERTH_IDENTITY_GRPC_ADDR", "127.0.0.1:9101"),
		TenantGRPCAddr:    config.String("BERTH_TENANT_GRPC_ADDR", "127.0.0.1:9102"),
		AnalyticsGRPCAddr: config.String("BERTH_ANALYTICS_GRPC_ADDR", "127.0.0.1:9103"),
		Issuer:            config.String("BERTH_ISSUER", DefaultIssuer),
		PublicURL:         config.String("BERTH_PUBLIC_URL", ""),
		NATSURL:           config.String("BERTH_NATS_URL", ""),
		AdminToken:        config.String("BERTH_ADMIN_TOKEN", ""),
		ServiceToken:      config.String("BERTH_SERVICE_TOKEN", ""),
		Log:               log,
	}
	var err error
	if cfg.TrustedProxies, err = login.ParseProxies(config.String("BERTH_TRUSTED_PROXIES", "")); err != nil {
		return cfg, fmt.Errorf("BERTH_TRUSTED_PROXIES: %w", err)
	}
	if cfg.Pepper, err = config.Bytes("BERTH_API_KEY_PEPPER"); err != nil {
		return cfg, err
	}
	if cfg.SecretKey, err = config.Bytes("BERTH_SECRET_KEY"); err != nil {
		return cfg, err
	}
	if base := config.String("BERTH_DATABASE_URL", ""); base != "" {
		if cfg.Pepper == nil || cfg.SecretKey == nil {
			return cfg, errors.New("BERTH_DATABASE_URL needs BERTH_API_KEY_PEPPER and BERTH_SECRET_KEY (keys must outlive the process)")
		}
		if cfg.IdentityDatabaseURL, err = ServiceDatabase(ctx, base, "identity"); err != nil {
			return cfg, err
		}
		if cfg.TenantDatabaseURL, err = ServiceDatabase(ctx, base, "tenant"); err != nil {
			return cfg, err
		}
		if cfg.AnalyticsDatabaseURL, err = ServiceDatabase(ctx, base, "analytics"); err != nil {
			return cfg, err
		}
	}
	if cfg.Pepper == nil {
		cfg.Pepper = randomBytes(32)
	}
	if cfg.SecretKey == nil {
		cfg.SecretKey = randomBytes(32)
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = hex.EncodeToString(randomBytes(24))
	}
	if cfg.ServiceToken == "" {
		cfg.ServiceToken = hex.EncodeToString(randomBytes(24))
	}
	return cfg, nil
}

// ServiceDatabase returns the URL of database "<db>_<service>" on base's server, creating it when
// missing, so that each bounded context owns its own database even on one server.
func ServiceDatabase(ctx context.Context, base, service string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		return "", errors.New("BERTH_DATABASE_URL is not a URL")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "berth"
	}
	name := db + "_" + service
	// Connect to the server's maintenance database: the one named in base need not exist.
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
