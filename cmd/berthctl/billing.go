package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// runBilling runs the billing service's commands.
func runBilling(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	fs, cmd := inv.fs, inv.cmd.name
	var (
		app        = fs.String("app", "", "app id")
		provider   = fs.String("provider", "", "pspx or pspy")
		connection = fs.String("connection", "", "connection id")
		returnURL  = fs.String("return-url", "", "payment return URL")
		freeze     = fs.Int("freeze-after", 0, "failed payments that freeze a tenant")
		oneTime    = fs.Int("one-time-days", 0, "days a one-time payment stays valid")
		referral   = fs.String("referral-promotion", "", "promotion id given to referrers")
		renewal    = fs.String("renewal-line", "", "renewal invoice line description")
		product    = fs.String("product", "", "product name")
		amount     = fs.Int64("amount", 0, "amount in minor units")
		currency   = fs.String("currency", "EUR", "ISO 4217 currency")
		interval   = fs.String("interval", "", `subscription interval, e.g. "1 month"; empty for one-time`)
		name       = fs.String("name", "", "name")
		basis      = fs.Int("basis-points", 0, "tax percentage in basis points (1900 = 19 %)")
		inclusive  = fs.Bool("inclusive", false, "prices include the tax")
		code       = fs.String("code", "", "promotion code")
		descr      = fs.String("description", "", "description")
		freeUnits  = fs.Int("free-units", 0, "free units")
		freeDays   = fs.Int("free-days", 0, "free days")
		validFrom  = fs.String("valid-from", "", "YYYY-MM-DD or RFC 3339")
		validUntil = fs.String("valid-until", "", "YYYY-MM-DD or RFC 3339")
		maxRedeem  = fs.Int("max-redemptions", 0, "0 = unlimited")
		promotion  = fs.String("promotion", "", "promotion id")
		tenant     = fs.String("tenant", "", "tenant id")
		limit      = fs.Int("limit", 50, "at most this many (1 to 100)")
		cursor     = fs.String("cursor", "", "the nextCursor of the page before")
		test       = fs.Bool("test", false, "list the provider's test-mode invoices (live otherwise)")
		retire     multi
	)
	fs.Var(&retire, "retire-webhook-secret", "webhook secret id to retire (repeatable)")
	if err := inv.parse(); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c := billingv1.NewBillingAdminServiceClient(conn)
	secret := func(name string) string { return strings.TrimSpace(os.Getenv(name)) }
	switch cmd {
	case "connection-create":
		p := billingv1.Provider(billingv1.Provider_value["PROVIDER_"+strings.ToUpper(*provider)])
		return c.CreateConnection(ctx, &billingv1.CreateConnectionRequest{AppId: *app, Provider: p,
			TestSecretKey: secret("PSP_TEST_SECRET_KEY"), LiveSecretKey: secret("PSP_LIVE_SECRET_KEY"),
			TestWebhookSecret: secret("PSP_TEST_WEBHOOK_SECRET"), LiveWebhookSecret: secret("PSP_LIVE_WEBHOOK_SECRET")})
	case "connection-rotate":
		return c.RotateConnectionSecrets(ctx, &billingv1.RotateConnectionSecretsRequest{ConnectionId: *connection,
			TestSecretKey: secret("PSP_TEST_SECRET_KEY"), LiveSecretKey: secret("PSP_LIVE_SECRET_KEY"),
			TestWebhookSecret: secret("PSP_TEST_WEBHOOK_SECRET"), LiveWebhookSecret: secret("PSP_LIVE_WEBHOOK_SECRET"),
			RetireWebhookSecretIds: retire})
	case "app-billing":
		return c.GetAppBilling(ctx, &billingv1.GetAppBillingRequest{AppId: *app})
	case "app-billing-set":
		req := &billingv1.UpdateAppSettingsRequest{AppId: *app}
		if set["connection"] {
			req.ConnectionId = connection
		}
		if set["return-url"] {
			req.PaymentReturnUrl = returnURL
		}
		if set["freeze-after"] {
			req.FailedPaymentsToFreeze = proto.Int32(int32(*freeze))
		}
		if set["one-time-days"] {
			req.OneTimePaymentValidDays = proto.Int32(int32(*oneTime))
		}
		if set["referral-promotion"] {
			req.ReferralPromotionId = referral
		}
		if set["renewal-line"] {
			req.RenewalLineDescription = renewal
		}
		return c.UpdateAppSettings(ctx, req)
	case "catalog-price-create":
		return c.CreateCatalogPrice(ctx, &billingv1.CreateCatalogPriceRequest{AppId: *app, ProductName: *product,
			Amount: *amount, Currency: *currency, Interval: *interval})
	case "catalog-tax-rate-create":
		return c.CreateCatalogTaxRate(ctx, &billingv1.CreateCatalogTaxRateRequest{AppId: *app, DisplayName: *name,
			BasisPoints: int32(*basis), Inclusive: *inclusive})
	case "catalog":
		return c.ListCatalog(ctx, &billingv1.ListCatalogRequest{AppId: *app})
	case "promotion-create":
		return c.CreatePromotion(ctx, &billingv1.CreatePromotionRequest{AppId: *app, Code: *code, Name: *name,
			Description: *descr, FreeUnits: int32(*freeUnits), FreeDays: int32(*freeDays), ValidFrom: *validFrom,
			ValidUntil: *validUntil, MaxRedemptions: int32(*maxRedeem)})
	case "promotions":
		return c.ListAppPromotions(ctx, &billingv1.ListPromotionsRequest{AppId: *app})
	case "promotion-limits":
		req := &billingv1.UpdatePromotionLimitsRequest{AppId: *app, PromotionId: *promotion}
		if set["max-redemptions"] {
			req.MaxRedemptions = proto.Int32(int32(*maxRedeem))
		}
		if set["valid-from"] {
			req.ValidFrom = validFrom
		}
		if set["valid-until"] {
			req.ValidUntil = validUntil
		}
		if req.MaxRedemptions == nil && req.ValidFrom == nil && req.ValidUntil == nil {
			return nil, usageError{errors.New("name at least one of -max-redemptions, -valid-from, -valid-until")}
		}
		return c.UpdatePromotionLimits(ctx, req)
	case "promotion-redemptions":
		if *limit < 1 || *limit > 100 {
			return nil, usageError{errors.New("-limit must be between 1 and 100")}
		}
		return c.ListPromotionRedemptions(ctx, &billingv1.ListPromotionRedemptionsRequest{AppId: *app, PromotionId: *promotion,
			Limit: int32(*limit), Cursor: *cursor})
	case "tenant-billing":
		return c.GetTenantBilling(ctx, &billingv1.GetTenantBillingRequest{AppId: *app, TenantId: *tenant, Test: *test})
	case "tenant-freeze", "tenant-unfreeze":
		return c.SetTenantFrozen(ctx, &billingv1.SetTenantFrozenRequest{AppId: *app, TenantId: *tenant, Frozen: cmd == "tenant-freeze"})
	default: // promotion-activate, promotion-deactivate
		return c.SetPromotionActive(ctx, &billingv1.SetPromotionActiveRequest{AppId: *app, PromotionId: *promotion,
			Active: cmd == "promotion-activate"})
	}
}
