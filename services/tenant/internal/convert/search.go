package convert

import (
	"time"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// BillingState is the tenant's billing state in the route-5 names and types, as the tenant shows
// it (the inverse of Billing, with the tenant's one-time payment date).
func BillingState(t domain.Tenant) *tenantv1.BillingState {
	b := t.Billing
	return &tenantv1.BillingState{
		PspxCustomerId:                    b.PspxCustomerID,
		PspxPriceId:                       b.PspxPriceID,
		PspxProductId:                     b.PspxProductID,
		PspxSubscriptionId:                b.PspxSubscriptionID,
		PspxTrialingPriceId:               b.PspxTrialingPriceID,
		PspxTrialingProductId:             b.PspxTrialingProductID,
		PspxTrialingSubscriptionId:        b.PspxTrialingSubscriptionID,
		PspxCheckoutSessionId:             b.PspxCheckoutSessionID,
		PspxDefaultPaymentMethodId:        b.PspxDefaultPaymentMethodID,
		PspxSubscriptionCancelAtPeriodEnd: b.PspxSubscriptionCancelAtPeriodEnd,
		PspxSubscriptionCancelAt:          b.PspxSubscriptionCancelAt,
		PspxPaymentMethod:                 b.PspxPaymentMethod,
		Mode:                              b.Mode,
		FreezedDueFailedPayment:           b.FreezedDueFailedPayment,
		PaidUntil:                         b.PaidUntil,
		FreeUntil:                         b.FreeUntil,
		PaidUnits:                         b.PaidUnits,
		FreeUnits:                         b.FreeUnits,
		Freezed:                           b.Freezed,
		PaymentFailed:                     b.PaymentFailed,
		PaymentFailedCount:                b.PaymentFailedCount,
		PaymentFailedDate:                 b.PaymentFailedDate,
		PspxOneTimePaymentValidThru:       t.PspxOneTimePaymentValidThru,
	}
}

// TenantPage is a page of a tenant search.
func TenantPage(tenants []domain.Tenant, next string) *tenantv1.TenantPage {
	out := &tenantv1.TenantPage{Tenants: make([]*tenantv1.TenantSummary, 0, len(tenants)), Next: next}
	for _, t := range tenants {
		out.Tenants = append(out.Tenants, &tenantv1.TenantSummary{
			Id: t.ID, Name: t.Name, CompanyName: t.CompanyName,
			CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), Billing: BillingState(t),
		})
	}
	return out
}
