package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/convert"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// Server implements billingv1.BillingServiceServer and billingv1.BillingAdminServiceServer.
type Server struct {
	billingv1.UnimplementedBillingServiceServer
	billingv1.UnimplementedBillingAdminServiceServer
	svc *app.Service
}

// Register serves the app-facing, operators', payment-page and provider-event services of svc
// on s.
func Register(s grpc.ServiceRegistrar, svc *app.Service) {
	srv := &Server{svc: svc}
	billingv1.RegisterBillingServiceServer(s, srv)
	billingv1.RegisterBillingAdminServiceServer(s, srv)
	billingv1.RegisterPaymentPageServiceServer(s, &PageServer{svc: svc})
	billingv1.RegisterProviderEventServiceServer(s, &EventServer{svc: svc})
}

// ListPromotions is route 12.
func (s *Server) ListPromotions(ctx context.Context, req *billingv1.ListPromotionsRequest) (*billingv1.PromotionList, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := s.svc.ListPromotions(ctx, appID, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return promotionList(ps), nil
}

// promotionList renders promotions as route 12 lists them.
func promotionList(ps []domain.Promotion) *billingv1.PromotionList {
	out := &billingv1.PromotionList{Kind: "promotion", ItemsLength: int32(len(ps)), Items: make([]*billingv1.Promotion, 0, len(ps))}
	for _, p := range ps {
		out.Items = append(out.Items, convert.Promotion(p))
	}
	return out
}

// RedeemPromotionCode is route 24.
func (s *Server) RedeemPromotionCode(ctx context.Context, req *billingv1.RedeemPromotionCodeRequest) (*emptypb.Empty, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.RedeemPromotionCode(ctx, appID, req.GetUserId(), req.GetPromotionCode()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// CreateConnection stores a provider connection (operators).
func (s *Server) CreateConnection(ctx context.Context, req *billingv1.CreateConnectionRequest) (*billingv1.Connection, error) {
	c, err := s.svc.CreateConnection(ctx, app.NewConnection{
		AppID: req.GetAppId(), Provider: convert.ProviderName(req.GetProvider()),
		TestSecretKey: req.GetTestSecretKey(), LiveSecretKey: req.GetLiveSecretKey(),
		TestWebhookSecret: req.GetTestWebhookSecret(), LiveWebhookSecret: req.GetLiveWebhookSecret(),
	})
	if err != nil {
		return nil, err
	}
	return convert.Connection(c), nil
}

// RotateConnectionSecrets replaces or adds secrets (operators).
func (s *Server) RotateConnectionSecrets(ctx context.Context, req *billingv1.RotateConnectionSecretsRequest) (*billingv1.Connection, error) {
	c, err := s.svc.RotateConnectionSecrets(ctx, app.SecretRotation{
		ConnectionID: req.GetConnectionId(), TestSecretKey: req.GetTestSecretKey(), LiveSecretKey: req.GetLiveSecretKey(),
		TestWebhookSecret: req.GetTestWebhookSecret(), LiveWebhookSecret: req.GetLiveWebhookSecret(),
		RetireWebhookIDs: req.GetRetireWebhookSecretIds(),
	})
	if err != nil {
		return nil, err
	}
	return convert.Connection(c), nil
}

// GetAppBilling shows an app's billing configuration (operators).
func (s *Server) GetAppBilling(ctx context.Context, req *billingv1.GetAppBillingRequest) (*billingv1.AppBilling, error) {
	return appBilling(s.svc.GetAppBilling(ctx, req.GetAppId()))
}

// UpdateAppSettings changes an app's settings (operators).
func (s *Server) UpdateAppSettings(ctx context.Context, req *billingv1.UpdateAppSettingsRequest) (*billingv1.AppBilling, error) {
	return appBilling(s.svc.UpdateAppSettings(ctx, req.GetAppId(), domain.SettingsPatch{
		ConnectionID: req.ConnectionId, PaymentReturnURL: req.PaymentReturnUrl,
		FailedPaymentsToFreeze: req.FailedPaymentsToFreeze, OneTimePaymentValidDays: req.OneTimePaymentValidDays,
		ReferralPromotionID: req.ReferralPromotionId, RenewalLineDescription: req.RenewalLineDescription,
	}))
}

func appBilling(b app.AppBilling, err error) (*billingv1.AppBilling, error) {
	if err != nil {
		return nil, err
	}
	out := &billingv1.AppBilling{AppId: b.Settings.AppID, Settings: convert.Settings(b.Settings)}
	for _, c := range b.Connections {
		out.Connections = append(out.Connections, convert.Connection(c))
	}
	return out, nil
}

// CreateCatalogPrice adds a pspy catalog price (operators).
func (s *Server) CreateCatalogPrice(ctx context.Context, req *billingv1.CreateCatalogPriceRequest) (*billingv1.CatalogPrice, error) {
	p, err := s.svc.CreateCatalogPrice(ctx, domain.CatalogPrice{AppID: req.GetAppId(), ProductName: req.GetProductName(),
		Amount: req.GetAmount(), Currency: req.GetCurrency(), Interval: req.GetInterval()})
	if err != nil {
		return nil, err
	}
	return convert.CatalogPrice(p), nil
}

// CreateCatalogTaxRate adds a pspy catalog tax rate (operators).
func (s *Server) CreateCatalogTaxRate(ctx context.Context, req *billingv1.CreateCatalogTaxRateRequest) (*billingv1.CatalogTaxRate, error) {
	r, err := s.svc.CreateCatalogTaxRate(ctx, domain.CatalogTaxRate{AppID: req.GetAppId(), DisplayName: req.GetDisplayName(),
		BasisPoints: req.GetBasisPoints(), Inclusive: req.GetInclusive()})
	if err != nil {
		return nil, err
	}
	return convert.CatalogTaxRate(r), nil
}

// ListCatalog lists an app's catalog (operators).
func (s *Server) ListCatalog(ctx context.Context, req *billingv1.ListCatalogRequest) (*billingv1.Catalog, error) {
	prices, rates, err := s.svc.Catalog(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	out := &billingv1.Catalog{}
	for _, p := range prices {
		out.Prices = append(out.Prices, convert.CatalogPrice(p))
	}
	for _, r := range rates {
		out.TaxRates = append(out.TaxRates, convert.CatalogTaxRate(r))
	}
	return out, nil
}

// CreatePromotion defines a promotion (operators).
func (s *Server) CreatePromotion(ctx context.Context, req *billingv1.CreatePromotionRequest) (*billingv1.Promotion, error) {
	from, err := optionalTime("validFrom", req.GetValidFrom())
	if err != nil {
		return nil, err
	}
	until, err := optionalTime("validUntil", req.GetValidUntil())
	if err != nil {
		return nil, err
	}
	p, err := s.svc.CreatePromotion(ctx, domain.NewPromotion{AppID: req.GetAppId(), Code: req.GetCode(), Name: req.GetName(),
		Description: req.GetDescription(), FreeUnits: req.GetFreeUnits(), FreeDays: req.GetFreeDays(),
		ValidFrom: from, ValidUntil: until, MaxRedemptions: req.GetMaxRedemptions()})
	if err != nil {
		return nil, err
	}
	return convert.Promotion(p), nil
}

// SetPromotionActive switches a promotion (operators).
func (s *Server) SetPromotionActive(ctx context.Context, req *billingv1.SetPromotionActiveRequest) (*billingv1.Promotion, error) {
	p, err := s.svc.SetPromotionActive(ctx, req.GetAppId(), req.GetPromotionId(), req.GetActive())
	if err != nil {
		return nil, err
	}
	return convert.Promotion(p), nil
}

// SetTenantFrozen freezes or unfreezes a tenant (operators).
func (s *Server) SetTenantFrozen(ctx context.Context, req *billingv1.SetTenantFrozenRequest) (*emptypb.Empty, error) {
	if err := s.svc.SetTenantFrozen(ctx, req.GetAppId(), req.GetTenantId(), req.GetFrozen()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// optionalTime reads an RFC 3339 time or a YYYY-MM-DD day (midnight UTC); "" is the zero time.
func optionalTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fault.InvalidField(field, "must be an RFC 3339 time or a YYYY-MM-DD date")
}
