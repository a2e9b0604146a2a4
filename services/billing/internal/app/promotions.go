package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/convert"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// ListPromotions is route 12: the caller's app's promotions.
func (s *Service) ListPromotions(ctx context.Context, callerApp, appID string) ([]domain.Promotion, error) {
	if err := authn.OwnApp(callerApp, appID); err != nil {
		return nil, err
	}
	return s.store.Promotions(ctx, canonical(appID))
}

// RedeemPromotionCode is route 24: the user's tenant redeems the code once. The admitted caller is
// a write key of the app or the user's own token (the policy compared the path's user with the
// token's).
func (s *Service) RedeemPromotionCode(ctx context.Context, callerApp, userID, code string) error {
	userID = canonical(userID)
	if !isUUID(userID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	code = domain.CanonicalCode(code)
	if code == "" || len(code) > 64 {
		return domain.ErrUnknownCode
	}
	u, err := s.users.User(ctx, callerApp, userID)
	if err != nil {
		return err
	}
	if u.TenantID == "" {
		return fault.InvalidField("userId", "belongs to no tenant")
	}
	now := s.now()
	r := Redemption{AppID: callerApp, Code: code, TenantID: u.TenantID, UserID: u.ID, At: now}
	acct, err := s.store.Redeem(ctx, r, redeem(now, "promotion.redeemed", u.ID, ""))
	if err != nil {
		return err
	}
	return s.publish(ctx, acct)
}

// redeem is the effect of a promotion on the tenant's account that receives it, with its events:
// the tenant's new billing state (for reason) and the redemption, by userID (the redeeming user,
// or the referrer of referredTenantID for a referral reward).
func redeem(now time.Time, reason, userID, referredTenantID string) func(*domain.Promotion, *domain.Account) ([]events.Event, error) {
	return func(p *domain.Promotion, a *domain.Account) ([]events.Event, error) {
		if err := p.Redeem(a, now); err != nil {
			return nil, err
		}
		changed, err := stateEvent(*a, reason)
		if err != nil {
			return nil, err
		}
		redeemed, err := events.New(Source, billingv1.EventPromotionRedeemed, a.AppID, &billingv1.PromotionRedeemed{
			AppId: a.AppID, PromotionId: p.ID, Code: p.Code, TenantId: a.TenantID, UserId: userID,
			FreeUnits: p.FreeUnits, FreeDays: p.FreeDays, At: domain.FormatTime(now), ReferredTenantId: referredTenantID,
		})
		if err != nil {
			return nil, err
		}
		return []events.Event{changed, redeemed}, nil
	}
}

// stateEvent is the billing.tenant.changed event of an account after a change.
func stateEvent(a domain.Account, reason string) (events.Event, error) {
	return events.New(Source, billingv1.EventTenantChanged, a.AppID, &billingv1.TenantBillingChanged{
		AppId: a.AppID, TenantId: a.TenantID, Revision: a.Revision, State: convert.State(a.State), Reason: reason,
	})
}

// CreatePromotion is the operators' call.
func (s *Service) CreatePromotion(ctx context.Context, n domain.NewPromotion) (domain.Promotion, error) {
	n.AppID = canonical(n.AppID)
	if !isUUID(n.AppID) {
		return domain.Promotion{}, fault.InvalidField("appId", "must be a UUID")
	}
	p, err := domain.CreatePromotion(n, s.newID(), s.now())
	if err != nil {
		return domain.Promotion{}, err
	}
	if err := s.store.CreatePromotion(ctx, p); err != nil {
		return domain.Promotion{}, err
	}
	return p, nil
}

// SetPromotionActive switches a promotion on or off.
func (s *Service) SetPromotionActive(ctx context.Context, appID, id string, active bool) (domain.Promotion, error) {
	return s.updatePromotion(ctx, appID, id, func(p *domain.Promotion) error {
		p.Active = active
		return nil
	})
}

// UpdatePromotionLimits changes how often and when a promotion may be redeemed, under the
// promotion's lock, which redemptions take too: the new maximum is checked against every
// redemption committed before it, and every later one is checked against it.
func (s *Service) UpdatePromotionLimits(ctx context.Context, appID, id string, l domain.PromotionLimits) (domain.Promotion, error) {
	return s.updatePromotion(ctx, appID, id, func(p *domain.Promotion) error { return p.EditLimits(l) })
}

// updatePromotion checks the ids and runs fn on the app's promotion.
func (s *Service) updatePromotion(ctx context.Context, appID, id string, fn func(*domain.Promotion) error) (domain.Promotion, error) {
	appID, id, err := promotionRef(appID, id)
	if err != nil {
		return domain.Promotion{}, err
	}
	return s.store.UpdatePromotion(ctx, appID, id, fn)
}

// promotionRef canonicalises an app's and a promotion's ids.
func promotionRef(appID, id string) (string, string, error) {
	appID, id = canonical(appID), canonical(id)
	switch {
	case !isUUID(appID):
		return "", "", fault.InvalidField("appId", "must be a UUID")
	case !isUUID(id):
		return "", "", fault.InvalidField("promotionId", "must be a UUID")
	}
	return appID, id, nil
}

// ListAppPromotions lists an app's promotions, with their redemption counts, for its operators.
func (s *Service) ListAppPromotions(ctx context.Context, appID string) ([]domain.Promotion, error) {
	appID = canonical(appID)
	if !isUUID(appID) {
		return nil, fault.InvalidField("appId", "must be a UUID")
	}
	return s.store.Promotions(ctx, appID)
}

// Pages of a promotion's uses: 50 unless the caller asks for another size up to 100.
const (
	defaultUsePage = 50
	maxUsePage     = 100
)

// UsePage is a page of a promotion's uses, newest first; Next continues it ("" at the end).
type UsePage struct {
	Uses []domain.PromotionUse
	Next string
}

// PromotionRedemptions pages through a promotion's uses (redemptions and referral rewards),
// newest first, after cursor ("" from the newest).
func (s *Service) PromotionRedemptions(ctx context.Context, appID, id string, limit int, cursor string) (UsePage, error) {
	appID, id, err := promotionRef(appID, id)
	if err != nil {
		return UsePage{}, err
	}
	if limit == 0 {
		limit = defaultUsePage
	}
	if limit < 1 || limit > maxUsePage {
		return UsePage{}, fault.InvalidField("limit", "must be between 1 and %d", maxUsePage)
	}
	var after *domain.UseCursor
	if cursor != "" {
		c, err := domain.DecodeUseCursor(cursor)
		if err != nil {
			return UsePage{}, err
		}
		after = &c
	}
	ps, err := s.store.Promotions(ctx, appID)
	if err != nil {
		return UsePage{}, err
	}
	if !slices.ContainsFunc(ps, func(p domain.Promotion) bool { return p.ID == id }) {
		return UsePage{}, domain.ErrPromotionNotFound
	}
	// One more than the page tells whether a next page exists, so the last page has no cursor.
	uses, err := s.store.PromotionUses(ctx, appID, id, after, limit+1)
	if err != nil {
		return UsePage{}, err
	}
	page := UsePage{Uses: uses}
	if len(uses) > limit {
		page.Uses = uses[:limit]
		page.Next = domain.CursorOf(uses[limit-1]).Encode()
	}
	return page, nil
}

func canonical(id string) string { return strings.ToLower(strings.TrimSpace(id)) }
