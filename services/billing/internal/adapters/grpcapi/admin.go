package grpcapi

import (
	"context"
	"time"

	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/convert"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// The operators' reading and steering of promotions and tenants' money (berthctl, the console).

// ListAppPromotions lists an app's promotions (operators).
func (s *Server) ListAppPromotions(ctx context.Context, req *billingv1.ListPromotionsRequest) (*billingv1.PromotionList, error) {
	ps, err := s.svc.ListAppPromotions(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return promotionList(ps), nil
}

// UpdatePromotionLimits changes a promotion's limits (operators).
func (s *Server) UpdatePromotionLimits(ctx context.Context, req *billingv1.UpdatePromotionLimitsRequest) (*billingv1.Promotion, error) {
	l := domain.PromotionLimits{MaxRedemptions: req.MaxRedemptions}
	for _, f := range []struct {
		name string
		in   *string
		out  **time.Time
	}{{"validFrom", req.ValidFrom, &l.ValidFrom}, {"validUntil", req.ValidUntil, &l.ValidUntil}} {
		if f.in == nil {
			continue
		}
		t, err := optionalTime(f.name, *f.in)
		if err != nil {
			return nil, err
		}
		*f.out = &t
	}
	p, err := s.svc.UpdatePromotionLimits(ctx, req.GetAppId(), req.GetPromotionId(), l)
	if err != nil {
		return nil, err
	}
	return convert.Promotion(p), nil
}

// ListPromotionRedemptions pages through a promotion's uses (operators).
func (s *Server) ListPromotionRedemptions(ctx context.Context, req *billingv1.ListPromotionRedemptionsRequest) (*billingv1.PromotionRedemptionPage, error) {
	page, err := s.svc.PromotionRedemptions(ctx, req.GetAppId(), req.GetPromotionId(), int(req.GetLimit()), req.GetCursor())
	if err != nil {
		return nil, err
	}
	out := &billingv1.PromotionRedemptionPage{NextCursor: page.Next, Items: make([]*billingv1.PromotionRedemption, 0, len(page.Uses))}
	for _, u := range page.Uses {
		out.Items = append(out.Items, convert.PromotionUse(u))
	}
	return out, nil
}

// GetTenantBilling shows a tenant's money (operators).
func (s *Server) GetTenantBilling(ctx context.Context, req *billingv1.GetTenantBillingRequest) (*billingv1.TenantBilling, error) {
	b, err := s.svc.GetTenantBilling(ctx, req.GetAppId(), req.GetTenantId(), req.GetTest())
	if err != nil {
		return nil, err
	}
	invoices, err := invoiceList(b.Invoices)
	if err != nil {
		return nil, err
	}
	out := &billingv1.TenantBilling{
		AppId: b.Account.AppID, TenantId: b.Account.TenantID, Revision: b.Account.Revision,
		State: convert.State(b.Account.State), FrozenReason: b.Account.State.FrozenReason(), Invoices: invoices,
		Payments: make([]*billingv1.TenantPayment, 0, len(b.Payments)), Redemptions: make([]*billingv1.PromotionRedemption, 0, len(b.Grants)),
	}
	for _, p := range b.Payments {
		out.Payments = append(out.Payments, payment(p))
	}
	for _, u := range b.Grants {
		out.Redemptions = append(out.Redemptions, convert.PromotionUse(u))
	}
	return out, nil
}

func payment(p app.Payment) *billingv1.TenantPayment {
	return &billingv1.TenantPayment{Id: p.ID, Source: p.Source, Kind: p.Kind, Test: p.Test, Price: p.Price, TaxRate: p.TaxRate,
		Quantity: p.Quantity, Amount: p.Amount, Status: p.Status, UserId: p.UserID,
		CreatedAt: domain.FormatTime(p.Created), UpdatedAt: domain.FormatTime(p.Updated)}
}
