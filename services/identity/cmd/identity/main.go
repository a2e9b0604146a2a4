// Command identity runs the identity service as its own process. Besides the common settings
// (pkg/svcmain) it reads:
//
//	BERTH_API_KEY_PEPPER   HMAC pepper of API-key hashes (hex or base64; required)
//	BERTH_SECRET_KEY       32-byte AES-GCM key sealing private keys at rest (hex or base64; required)
//	BERTH_ISSUER           `iss` of issued tokens ("berth")
//	BERTH_PUBLIC_URL       the REST edge's public base URL, for discovery and invite links
//	BERTH_TENANT_ADDR      tenant service gRPC address, for sign-up (127.0.0.1:9102)
//	BERTH_SMTP_ADDR        SMTP server host:port for referral invites (unset: invites unavailable)
//	BERTH_SMTP_FROM, BERTH_SMTP_USER, BERTH_SMTP_PASSWORD
package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/svcmain"
	"github.com/berthhq/berth/services/identity/server"
)

func main() {
	svcmain.Main("identity", "127.0.0.1:9101", func(ctx context.Context, env *svcmain.Env) (svcmain.Process, error) {
		pepper, err := config.Bytes("BERTH_API_KEY_PEPPER")
		if err != nil {
			return nil, err
		}
		secret, err := config.Bytes("BERTH_SECRET_KEY")
		if err != nil {
			return nil, err
		}
		tenant, err := env.Dial("BERTH_TENANT_ADDR", "127.0.0.1:9102")
		if err != nil {
			return nil, err
		}
		mailer, err := smtpMailer(env.Log)
		if err != nil {
			return nil, err
		}
		return server.New(ctx, server.Config{
			DatabaseURL:  env.DatabaseURL,
			Bus:          env.Bus,
			Pepper:       pepper,
			SecretKey:    secret,
			AdminToken:   env.AdminToken,
			ServiceToken: env.ServiceToken,
			Log:          env.Log,
			Issuer:       config.String("BERTH_ISSUER", ""),
			PublicURL:    config.String("BERTH_PUBLIC_URL", ""),
			Tenant:       tenant,
			Mailer:       mailer,
		})
	})
}

// smtpMailer builds the sender of referral invites. Without an address the service runs without
// mail, and invites answer Unavailable.
func smtpMailer(log *slog.Logger) (mail.Sender, error) {
	addr := config.String("BERTH_SMTP_ADDR", "")
	if addr == "" {
		log.Warn("BERTH_SMTP_ADDR is not set: referral invites are unavailable")
		return nil, nil
	}
	s, err := mail.NewSMTP(addr, config.String("BERTH_SMTP_FROM", ""), config.String("BERTH_SMTP_USER", ""), config.String("BERTH_SMTP_PASSWORD", ""))
	if err != nil {
		return nil, fmt.Errorf("smtp: %w", err)
	}
	return s, nil
}
