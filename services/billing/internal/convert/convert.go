package convert

import (
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// State renders a tenant's billing state in the route-5 field names and types.
func State(s domain.State) *tenantv1.BillingState {
	return &tenantv1.BillingState{
		PspxCustomerId:                    s.PspxCustomerID,
		PspxPriceId:                       s.PspxPriceID,
		PspxProductId:                     s.PspxProductID,
		PspxSubscriptionId:                s.PspxSubscriptionID,
		PspxTrialingPriceId:               s.PspxTrialingPriceID,
		PspxTrialingProductId:             s.PspxTrialingProductID,
		PspxTrialingSubscriptionId:        s.PspxTrialingSubscriptionID,
		PspxCheckoutSessionId:             s.PspxCheckoutSessionID,
		PspxDefaultPaymentMethodId:        s.PspxDefaultPaymentMethodID,
		PspxSubscriptionCancelAtPeriodEnd: s.PspxSubscriptionCancelAtPeriodEnd,
		PspxSubscriptionCancelAt:          domain.FormatTime(s.PspxSubscriptionCancelAt),
		PspxPaymentMethod:                 s.PspxPaymentMethod,
		Mode:                              s.Mode,
		FreezedDueFailedPayment:           s.FreezedDueFailedPayment,
		PaidUntil:                         domain.FormatTime(s.PaidUntil),
		FreeUntil:                         domain.FormatTime(s.FreeUntil),
		PaidUnits:                         domain.FormatUnits(s.PaidUnits),
		FreeUnits:                         domain.FormatUnits(s.FreeUnits),
		Freezed:                           s.Freezed,
		PaymentFailed:                     s.PaymentFailed,
		PaymentFailedCount:                s.PaymentFailedCount,
		PaymentFailedDate:                 domain.FormatTime(s.PaymentFailedDate),
		PspxOneTimePaymentValidThru:       domain.FormatTime(s.OneTimePaymentValidThru),
	}
}

// Promotion renders a route-12 item.
func Promotion(p domain.Promotion) *billingv1.Promotion {
	return &billingv1.Promotion{
		Id: p.ID, Code: p.Code, Name: p.Name, Description: p.Description,
		FreeUnits: p.FreeUnits, FreeDays: p.FreeDays,
		ValidFrom: domain.FormatTime(p.ValidFrom), ValidUntil: domain.FormatTime(p.ValidUntil),
		MaxRedemptions: p.MaxRedemptions, Redemptions: p.Redemptions, Active: p.Active,
	}
}

// Provider renders a provider.
func Provider(p domain.Provider) billingv1.Provider {
	switch p {
	case domain.Pspx:
		return billingv1.Provider_PROVIDER_PSPX
	case domain.Pspy:
		return billingv1.Provider_PROVIDER_PSPY
	}
	return billingv1.Provider_PROVIDER_UNSPECIFIED
}

// ProviderName reads a provider ("" when unspecified, which the domain refuses).
func ProviderName(p billingv1.Provider) string {
	switch p {
	case billingv1.Provider_PROVIDER_PSPX:
		return string(domain.Pspx)
	case billingv1.Provider_PROVIDER_PSPY:
		return string(domain.Pspy)
	}
	return ""
}

// Connection renders a connection without its secrets.
func Connection(c domain.Connection) *billingv1.Connection {
	out := &billingv1.Connection{
		Id: c.ID, AppId: c.AppID, Provider: Provider(c.Provider),
		HasTestSecretKey: len(c.TestKey) > 0, HasLiveSecretKey: len(c.LiveKey) > 0,
		CreatedAt: domain.FormatTime(c.CreatedAt), UpdatedAt: domain.FormatTime(c.UpdatedAt),
	}
	for _, w := range c.WebhookSecrets {
		out.WebhookSecrets = append(out.WebhookSecrets, &billingv1.WebhookSecret{Id: w.ID, Test: w.Test, CreatedAt: domain.FormatTime(w.CreatedAt)})
	}
	return out
}

// Settings renders an app's settings.
func Settings(s domain.Settings) *billingv1.AppSettings {
	return &billingv1.AppSettings{
		ConnectionId: s.ConnectionID, PaymentReturnUrl: s.PaymentReturnURL,
		FailedPaymentsToFreeze: s.FailedPaymentsToFreeze, OneTimePaymentValidDays: s.OneTimePaymentValidDays,
		RenewalLineDescription: s.RenewalLineDescription,
		ReferralPromotionId:    s.ReferralPromotionID,
	}
}

// CatalogPrice renders a catalog price.
func CatalogPrice(p domain.CatalogPrice) *billingv1.CatalogPrice {
	return &billingv1.CatalogPrice{Id: p.ID, AppId: p.AppID, ProductName: p.ProductName, Amount: p.Amount,
		Currency: p.Currency, Interval: p.Interval, CreatedAt: domain.FormatTime(p.CreatedAt)}
}

// CatalogTaxRate renders a catalog tax rate.
func CatalogTaxRate(r domain.CatalogTaxRate) *billingv1.CatalogTaxRate {
	return &billingv1.CatalogTaxRate{Id: r.ID, AppId: r.AppID, DisplayName: r.DisplayName, BasisPoints: r.BasisPoints,
		Inclusive: r.Inclusive, CreatedAt: domain.FormatTime(r.CreatedAt)}
}

// PromotionUse renders a use of a promotion.
func PromotionUse(u domain.PromotionUse) *billingv1.PromotionRedemption {
	return &billingv1.PromotionRedemption{
		Kind: u.Kind.String(), PromotionId: u.PromotionID, Code: u.Code, TenantId: u.TenantID, UserId: u.UserID,
		ReferredTenantId: u.ReferredTenantID, FreeUnits: u.FreeUnits, FreeDays: u.FreeDays, At: domain.FormatTime(u.At),
	}
}
