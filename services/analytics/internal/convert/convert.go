package convert

import (
	"strconv"
	"time"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// SignInList renders route 8's data.
func SignInList(items []app.SignInItem) *analyticsv1.SignInList {
	out := &analyticsv1.SignInList{Kind: "analyticsSignIn", ItemsLength: int32(len(items)), Items: make([]*analyticsv1.SignIn, len(items))}
	for i, it := range items {
		u := user(it.SignIn, it.User, it.Tenant)
		out.Items[i] = &analyticsv1.SignIn{
			Id:                  it.SignIn.ID,
			LastSignInAt:        it.SignIn.At.UTC().Format(time.RFC3339),
			DaysSinceLastSignIn: strconv.Itoa(it.DaysSince),
			NewsletterMemberId:  u.GetNewsletterMemberId(),
			User:                u,
		}
	}
	return out
}

// user renders the current snapshot of the sign-in's user. Without one (no event about the user
// carried its data yet) the item still names the user, with what the sign-in itself knows.
func user(in domain.SignIn, snap *app.UserSnapshot, tenant *app.TenantSnapshot) *analyticsv1.AnalyticsUser {
	if snap == nil {
		return &analyticsv1.AnalyticsUser{Id: in.UserID, AppId: in.AppID, TenantId: in.TenantRef != ""}
	}
	u := snap.User // nil-safe getters: a user known only from its deletion renders empty fields
	return &analyticsv1.AnalyticsUser{
		Id:                        snap.UserID,
		AppId:                     snap.AppID,
		Language:                  u.GetLanguage(),
		Salutation:                u.GetSalutation(),
		SalutationOther:           u.GetSalutationOther(),
		AcceptedNewsletter:        u.GetAcceptedNewsletter(),
		AcceptedNewsletterDate:    u.GetAcceptedNewsletterDate(),
		LastAskedNewsletterSignUp: u.GetLastAskedNewsletterSignUp(),
		NewsletterMemberId:        u.GetNewsletterMemberId(),
		Name:                      u.GetName(),
		GivenName:                 u.GetGivenName(),
		FamilyName:                u.GetFamilyName(),
		MiddleName:                u.GetMiddleName(),
		Nickname:                  u.GetNickname(),
		PreferredUsername:         u.GetPreferredUsername(),
		Profile:                   u.GetProfile(),
		Picture:                   u.GetPicture(),
		Website:                   u.GetWebsite(),
		Email:                     u.GetEmail(),
		EmailVerified:             u.GetEmailVerified(),
		Gender:                    u.GetGender(),
		OtherGender:               u.GetOtherGender(),
		Birthdate:                 u.GetBirthdate(),
		Zoneinfo:                  u.GetZoneinfo(),
		Locale:                    u.GetLocale(),
		PhoneNumber:               u.GetPhoneNumber(),
		PhoneNumberVerified:       u.GetPhoneNumberVerified(),
		Freezed:                   u.GetFreezed(),
		Deleted:                   snap.Deleted || u.GetDeleted(),
		TenantId:                  snap.TenantRef != "",
		Tenant:                    analyticsTenant(tenant),
	}
}

// analyticsTenant renders a tenant snapshot without addresses and users; nil stays nil (JSON null).
func analyticsTenant(snap *app.TenantSnapshot) *analyticsv1.AnalyticsTenant {
	if snap == nil || snap.Tenant == nil {
		return nil
	}
	t := snap.Tenant
	return &analyticsv1.AnalyticsTenant{
		Id:                                snap.TenantID,
		Name:                              t.GetName(),
		PspxCustomerId:                    t.GetPspxCustomerId(),
		PspxPriceId:                       t.GetPspxPriceId(),
		PspxProductId:                     t.GetPspxProductId(),
		PspxSubscriptionId:                t.GetPspxSubscriptionId(),
		PspxTrialingPriceId:               t.GetPspxTrialingPriceId(),
		PspxTrialingProductId:             t.GetPspxTrialingProductId(),
		PspxTrialingSubscriptionId:        t.GetPspxTrialingSubscriptionId(),
		PspxCheckoutSessionId:             t.GetPspxCheckoutSessionId(),
		PspxDefaultPaymentMethodId:        t.GetPspxDefaultPaymentMethodId(),
		PspxSubscriptionCancelAtPeriodEnd: t.GetPspxSubscriptionCancelAtPeriodEnd(),
		PspxSubscriptionCancelAt:          t.GetPspxSubscriptionCancelAt(),
		PspxPaymentMethod:                 t.GetPspxPaymentMethod(),
		Mode:                              t.GetMode(),
		Description:                       t.GetDescription(),
		PspxOneTimePaymentValidThru:       t.GetPspxOneTimePaymentValidThru(),
		FreezedDueFailedPayment:           t.GetFreezedDueFailedPayment(),
		PaidUntil:                         t.GetPaidUntil(),
		FreeUntil:                         t.GetFreeUntil(),
		PaidUnits:                         t.GetPaidUnits(),
		FreeUnits:                         t.GetFreeUnits(),
		CompanyName:                       t.GetCompanyName(),
		CompanyVATId:                      t.GetCompanyVATId(),
		CompanyTaxType:                    t.GetCompanyTaxType(),
		CompanyTaxExempt:                  t.GetCompanyTaxExempt(),
		IsBusinessCustomer:                t.GetIsBusinessCustomer(),
		IsInvoicePending:                  t.GetIsInvoicePending(),
		Freezed:                           t.GetFreezed(),
		PaymentFailed:                     t.GetPaymentFailed(),
		PaymentFailedCount:                t.GetPaymentFailedCount(),
		PaymentFailedDate:                 t.GetPaymentFailedDate(),
		Deleted:                           t.GetDeleted(),
	}
}
