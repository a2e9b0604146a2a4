package app

import (
	"context"
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
	return s.store.UpdatePromotion(ctx, canonical(appID), canonical(id), func(p *domain.Promotion) error {
		p.Active = active
		return nil
	})
}

func canonical(id string) string { return strings.ToLower(strings.TrimSpace(id)) }
