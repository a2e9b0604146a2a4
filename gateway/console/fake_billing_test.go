package console

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

const (
	promoID       = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	otherPromoID  = "8d0f7780-8536-41ef-a55c-f18fd2fa1bf8"
	billingTenant = "9e1a8891-9647-42f0-b66d-a29ae3ab2cf9"
	connectionID  = "conn_0123456789abcdef"
)

// billingFake answers the console's billing calls from a small store of one app's promotions
// and records them in the identity fake's log (same order, same bearer check). The methods the
// console never calls panic (nil embedded interface).
type billingFake struct {
	billingv1.BillingAdminServiceClient
	*fake
	promotions  []*billingv1.Promotion
	redemptions []*billingv1.PromotionRedemption
	referral    string
}

func newBillingFake(f *fake) *billingFake {
	b := &billingFake{fake: f, referral: promoID}
	b.promotions = []*billingv1.Promotion{
		{Id: promoID, Code: "WELCOME", Name: "Welcome <gift>", FreeUnits: 5, FreeDays: 0, MaxRedemptions: 10, Redemptions: 1,
			ValidFrom: "2026-11-01T00:00:00Z", ValidUntil: "2026-12-31T12:30:00Z", Active: true},
		{Id: otherPromoID, Code: "SPRING", Name: "Spring", FreeDays: 30, Active: false},
	}
	b.redemptions = []*billingv1.PromotionRedemption{
		{Kind: "redemption", PromotionId: promoID, Code: "WELCOME", TenantId: billingTenant, UserId: "u-1", FreeUnits: 5, At: "2026-11-20T09:15:00Z"},
	}
	return b
}

// with gives a test console the billing fake.
func (b *billingFake) with(bs *Backends) { bs.Billing = b }

// billingAnswer records the call and answers its programmed error, or build's answer.
func billingAnswer[T proto.Message](ctx context.Context, b *billingFake, method string, req proto.Message, build func() T) (T, error) {
	if err := b.record(ctx, method, req); err != nil {
		var zero T
		return zero, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return build(), nil
}

func (b *billingFake) GetAppBilling(ctx context.Context, in *billingv1.GetAppBillingRequest, _ ...grpc.CallOption) (*billingv1.AppBilling, error) {
	return billingAnswer(ctx, b, "GetAppBilling", in, func() *billingv1.AppBilling {
		return &billingv1.AppBilling{AppId: in.GetAppId(), Settings: &billingv1.AppSettings{ConnectionId: connectionID, ReferralPromotionId: b.referral},
			Connections: []*billingv1.Connection{{Id: connectionID, AppId: in.GetAppId(), Provider: billingv1.Provider_PROVIDER_PSPX,
				HasTestSecretKey: true, WebhookSecrets: []*billingv1.WebhookSecret{{Id: "whs_1", Test: true}, {Id: "whs_2", Test: true}},
				CreatedAt: "2026-10-01T08:00:00Z"}}}
	})
}

func (b *billingFake) UpdateAppSettings(ctx context.Context, in *billingv1.UpdateAppSettingsRequest, _ ...grpc.CallOption) (*billingv1.AppBilling, error) {
	return billingAnswer(ctx, b, "UpdateAppSettings", in, func() *billingv1.AppBilling {
		b.referral = in.GetReferralPromotionId()
		return &billingv1.AppBilling{AppId: in.GetAppId()}
	})
}

func (b *billingFake) ListCatalog(ctx context.Context, in *billingv1.ListCatalogRequest, _ ...grpc.CallOption) (*billingv1.Catalog, error) {
	return billingAnswer(ctx, b, "ListCatalog", in, func() *billingv1.Catalog {
		return &billingv1.Catalog{
			Prices:   []*billingv1.CatalogPrice{{Id: "price_1", ProductName: "Seats", Amount: 1250, Currency: "EUR", Interval: "1 month"}},
			TaxRates: []*billingv1.CatalogTaxRate{{Id: "txr_1", DisplayName: "VAT", BasisPoints: 1900}},
		}
	})
}

func (b *billingFake) CreateCatalogPrice(ctx context.Context, in *billingv1.CreateCatalogPriceRequest, _ ...grpc.CallOption) (*billingv1.CatalogPrice, error) {
	return billingAnswer(ctx, b, "CreateCatalogPrice", in, func() *billingv1.CatalogPrice { return &billingv1.CatalogPrice{Id: "price_2"} })
}

func (b *billingFake) CreateCatalogTaxRate(ctx context.Context, in *billingv1.CreateCatalogTaxRateRequest, _ ...grpc.CallOption) (*billingv1.CatalogTaxRate, error) {
	return billingAnswer(ctx, b, "CreateCatalogTaxRate", in, func() *billingv1.CatalogTaxRate { return &billingv1.CatalogTaxRate{Id: "txr_2"} })
}

func (b *billingFake) ListAppPromotions(ctx context.Context, in *billingv1.ListPromotionsRequest, _ ...grpc.CallOption) (*billingv1.PromotionList, error) {
	return billingAnswer(ctx, b, "ListAppPromotions", in, func() *billingv1.PromotionList {
		items := make([]*billingv1.Promotion, len(b.promotions))
		for i, p := range b.promotions {
			items[i] = proto.Clone(p).(*billingv1.Promotion)
		}
		return &billingv1.PromotionList{Kind: "promotions", Items: items}
	})
}

// newPromotionID is the id the fake gives a created promotion.
const newPromotionID = "a1b2c3d4-0000-4000-8000-000000000001"

func (b *billingFake) CreatePromotion(ctx context.Context, in *billingv1.CreatePromotionRequest, _ ...grpc.CallOption) (*billingv1.Promotion, error) {
	return billingAnswer(ctx, b, "CreatePromotion", in, func() *billingv1.Promotion {
		p := &billingv1.Promotion{Id: newPromotionID, Code: strings.ToUpper(in.GetCode()), Name: in.GetName(), FreeUnits: in.GetFreeUnits(),
			FreeDays: in.GetFreeDays(), MaxRedemptions: in.GetMaxRedemptions(), Active: true}
		b.promotions = append(b.promotions, p)
		return p
	})
}

// promotion runs fn on the named promotion, NotFound when the fake has none.
func (b *billingFake) promotion(ctx context.Context, method string, req proto.Message, id string, fn func(*billingv1.Promotion)) (*billingv1.Promotion, error) {
	var found *billingv1.Promotion
	_, err := billingAnswer(ctx, b, method, req, func() *billingv1.Promotion {
		for _, p := range b.promotions {
			if p.GetId() == id {
				fn(p)
				found = proto.Clone(p).(*billingv1.Promotion)
			}
		}
		return found
	})
	if err == nil && found == nil {
		err = status.Error(codes.NotFound, "no such promotion")
	}
	return found, err
}

func (b *billingFake) SetPromotionActive(ctx context.Context, in *billingv1.SetPromotionActiveRequest, _ ...grpc.CallOption) (*billingv1.Promotion, error) {
	return b.promotion(ctx, "SetPromotionActive", in, in.GetPromotionId(), func(p *billingv1.Promotion) { p.Active = in.GetActive() })
}

func (b *billingFake) UpdatePromotionLimits(ctx context.Context, in *billingv1.UpdatePromotionLimitsRequest, _ ...grpc.CallOption) (*billingv1.Promotion, error) {
	return b.promotion(ctx, "UpdatePromotionLimits", in, in.GetPromotionId(), func(p *billingv1.Promotion) {
		p.MaxRedemptions, p.ValidFrom, p.ValidUntil = in.GetMaxRedemptions(), in.GetValidFrom(), in.GetValidUntil()
	})
}

// fixtureCursor is the cursor the fake's first page of redemptions ends with.
const fixtureCursor = "MTczMjA5NjAwMDAwMDAwMHwwfGFiYw"

func (b *billingFake) ListPromotionRedemptions(ctx context.Context, in *billingv1.ListPromotionRedemptionsRequest, _ ...grpc.CallOption) (*billingv1.PromotionRedemptionPage, error) {
	return billingAnswer(ctx, b, "ListPromotionRedemptions", in, func() *billingv1.PromotionRedemptionPage {
		if in.GetCursor() != "" {
			return &billingv1.PromotionRedemptionPage{Items: []*billingv1.PromotionRedemption{{Kind: "referralReward", PromotionId: promoID,
				TenantId: "older-tenant", ReferredTenantId: "referred-tenant", FreeUnits: 5, At: "2026-11-02T10:00:00Z"}}}
		}
		var items []*billingv1.PromotionRedemption
		for _, r := range b.redemptions {
			if r.GetPromotionId() == in.GetPromotionId() {
				items = append(items, r)
			}
		}
		return &billingv1.PromotionRedemptionPage{Items: items, NextCursor: fixtureCursor}
	})
}

// newBillingConsole is a signed-in browser on a console over the identity and billing fakes.
func newBillingConsole(t *testing.T) (*fake, *billingFake, *browser) {
	t.Helper()
	f := newFake()
	b := newBillingFake(f)
	c, _ := newConsole(t, f, b.with)
	br := newBrowser(t, c)
	br.signIn()
	return f, b, br
}
