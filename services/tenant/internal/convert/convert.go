package convert

import (
	"github.com/berthhq/berth/services/tenant/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Tenant renders t as the route-5 tenant without users (they belong to identity).
func Tenant(t domain.Tenant) *tenantv1.Tenant {
	b := t.Billing
	return &tenantv1.Tenant{
		Kind:                              "tenant",
		Id:                                t.ID,
		Name:                              t.Name,
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
		Description:                       t.Description,
		PspxOneTimePaymentValidThru:       t.PspxOneTimePaymentValidThru,
		FreezedDueFailedPayment:           b.FreezedDueFailedPayment,
		PaidUntil:                         b.PaidUntil,
		FreeUntil:                         b.FreeUntil,
		PaidUnits:                         b.PaidUnits,
		FreeUnits:                         b.FreeUnits,
		CompanyName:                       t.CompanyName,
		CompanyVATId:                      t.CompanyVATID,
		CompanyTaxType:                    t.CompanyTaxType,
		CompanyTaxExempt:                  t.CompanyTaxExempt,
		IsBusinessCustomer:                t.IsBusinessCustomer,
		IsInvoicePending:                  t.IsInvoicePending,
		Freezed:                           b.Freezed,
		PaymentFailed:                     b.PaymentFailed,
		PaymentFailedCount:                b.PaymentFailedCount,
		PaymentFailedDate:                 b.PaymentFailedDate,
		Deleted:                           t.Deleted,
		ShippingAddress:                   address(t.ShippingAddress),
		BillingAddress:                    address(t.BillingAddress),
	}
}

func address(a *domain.Address) *tenantv1.Address {
	if a == nil {
		return nil
	}
	return &tenantv1.Address{
		Id:         a.ID,
		Name:       a.Name,
		City:       a.City,
		Country:    a.Country,
		Line1:      a.Line1,
		Line2:      a.Line2,
		PostalCode: a.PostalCode,
		State:      a.State,
		Type:       a.Type,
		Deleted:    a.Deleted,
	}
}

// UpdateBody maps route 17's body. A nil message is an empty flat body.
func UpdateBody(p *tenantv1.TenantPatch) domain.UpdateBody {
	if p == nil {
		return domain.UpdateBody{}
	}
	b := domain.UpdateBody{
		Kind: p.Kind,
		Patch: domain.Patch{
			Name:                        p.Name,
			PspxOneTimePaymentValidThru: p.PspxOneTimePaymentValidThru,
			Description:                 p.Description,
			CompanyName:                 p.CompanyName,
			CompanyVATID:                p.CompanyVATId,
			CompanyTaxType:              p.CompanyTaxType,
			CompanyTaxExempt:            p.CompanyTaxExempt,
			IsBusinessCustomer:          p.IsBusinessCustomer,
			IsInvoicePending:            p.IsInvoicePending,
			ShippingAddress:             AddressPatch(p.GetShippingAddress()),
			BillingAddress:              AddressPatch(p.GetBillingAddress()),
		},
	}
	if p.GetTenant() != nil {
		nested := UpdateBody(p.GetTenant())
		b.Nested = &nested
	}
	return b
}

// AddressPatch maps an address patch; nil stays nil (the address is left alone).
func AddressPatch(a *tenantv1.AddressPatch) *domain.AddressPatch {
	if a == nil {
		return nil
	}
	return &domain.AddressPatch{
		Name:       a.Name,
		City:       a.City,
		Country:    a.Country,
		Line1:      a.Line1,
		Line2:      a.Line2,
		PostalCode: a.PostalCode,
		State:      a.State,
	}
}

// Billing reads the billing state billing pushes (route-5 names and types) into the domain.
func Billing(b *tenantv1.BillingState) domain.Billing {
	return domain.Billing{
		PspxCustomerID:                    b.GetPspxCustomerId(),
		PspxPriceID:                       b.GetPspxPriceId(),
		PspxProductID:                     b.GetPspxProductId(),
		PspxSubscriptionID:                b.GetPspxSubscriptionId(),
		PspxTrialingPriceID:               b.GetPspxTrialingPriceId(),
		PspxTrialingProductID:             b.GetPspxTrialingProductId(),
		PspxTrialingSubscriptionID:        b.GetPspxTrialingSubscriptionId(),
		PspxCheckoutSessionID:             b.GetPspxCheckoutSessionId(),
		PspxDefaultPaymentMethodID:        b.GetPspxDefaultPaymentMethodId(),
		PspxSubscriptionCancelAtPeriodEnd: b.GetPspxSubscriptionCancelAtPeriodEnd(),
		PspxSubscriptionCancelAt:          b.GetPspxSubscriptionCancelAt(),
		PspxPaymentMethod:                 b.GetPspxPaymentMethod(),
		Mode:                              b.GetMode(),
		FreezedDueFailedPayment:           b.GetFreezedDueFailedPayment(),
		PaidUntil:                         b.GetPaidUntil(),
		FreeUntil:                         b.GetFreeUntil(),
		PaidUnits:                         b.GetPaidUnits(),
		FreeUnits:                         b.GetFreeUnits(),
		Freezed:                           b.GetFreezed(),
		PaymentFailed:                     b.GetPaymentFailed(),
		PaymentFailedCount:                b.GetPaymentFailedCount(),
		PaymentFailedDate:                 b.GetPaymentFailedDate(),
	}
}
