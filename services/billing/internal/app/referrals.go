package app

import (
	"context"
	"errors"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// GrantReferralReward gives the app's referral promotion to the tenant of whoever referred
// tenantID, because tenantID has just made its first payment (the billing.tenant.first_paid
// event). It reports whether a reward was granted. Nothing is owed when the app names no referral
// promotion, nobody referred the tenant (or the referrer is deleted, has no tenant, or shares
// this one), or the promotion no longer applies (inactive, outside its validity, exhausted); a
// reward granted before is not granted again, however often the event arrives. Ids that are no
// UUIDs are invalid: such an event can never apply.
//
// The referrer's new state reaches the tenant context through its billing.tenant.changed event,
// not synchronously: this runs inside the event consumer's transaction, which has not committed
// yet, and the referrer is not a caller waiting to read the change.
func (s *Service) GrantReferralReward(ctx context.Context, appID, tenantID string) (bool, error) {
	if !isUUID(appID) || !isUUID(tenantID) {
		return false, fault.InvalidField("tenantId", "names no tenant of an app")
	}
	settings, err := s.store.Settings(ctx, appID)
	if err != nil || settings.ReferralPromotionID == "" {
		return false, err
	}
	referrer, err := s.users.TenantReferrer(ctx, appID, tenantID)
	switch {
	case fault.Is(err, fault.KindNotFound):
		return false, nil
	case err != nil:
		return false, err
	case referrer.TenantID == "" || referrer.TenantID == tenantID:
		return false, nil
	}
	now := s.now()
	g := ReferralGrant{AppID: appID, PromotionID: settings.ReferralPromotionID, ReferredTenantID: tenantID,
		ReferrerTenantID: referrer.TenantID, ReferrerUserID: referrer.ID, At: now}
	_, err = s.store.GrantReferralReward(ctx, g, redeem(now, "referral.rewarded", referrer.ID, tenantID))
	switch {
	case errors.Is(err, domain.ErrReferralRewarded), errors.Is(err, domain.ErrPromotionNotFound), errors.Is(err, domain.ErrUnknownCode):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
