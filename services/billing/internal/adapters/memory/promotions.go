package memory

import (
	"context"
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// CreatePromotion stores p unless the app has its code.
func (s *Store) CreatePromotion(_ context.Context, p domain.Promotion) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.promotions, func(q domain.Promotion) bool { return q.AppID == p.AppID && q.Code == p.Code }) {
		return domain.ErrCodeTaken
	}
	s.promotions = append(s.promotions, p)
	return nil
}

// Promotions lists the app's promotions.
func (s *Store) Promotions(_ context.Context, appID string) ([]domain.Promotion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Promotion
	for _, p := range s.promotions {
		if p.AppID == appID {
			out = append(out, p)
		}
	}
	return out, nil
}

// UpdatePromotion runs fn on the app's promotion and stores it when fn succeeds.
func (s *Store) UpdatePromotion(_ context.Context, appID, id string, fn func(*domain.Promotion) error) (domain.Promotion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == appID && p.ID == id })
	if i < 0 {
		return domain.Promotion{}, domain.ErrPromotionNotFound
	}
	next := s.promotions[i]
	if err := fn(&next); err != nil {
		return domain.Promotion{}, err
	}
	s.promotions[i] = next
	return next, nil
}

// Redeem applies fn to the promotion and the account under the store's lock, once per tenant.
func (s *Store) Redeem(ctx context.Context, r app.Redemption, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == r.AppID && p.Code == r.Code })
	if i < 0 || s.redeemed[[2]string{s.promotions[i].ID, r.TenantID}] {
		return domain.Account{}, domain.ErrUnknownCode
	}
	return s.applyPromotion(ctx, i, r.TenantID, fn, func(p domain.Promotion) {
		s.redeemed[[2]string{p.ID, r.TenantID}] = true
		s.recordUse(p, domain.PromotionUse{Kind: domain.UseRedemption, TenantID: r.TenantID, UserID: r.UserID, At: r.At})
	})
}

// GrantReferralReward applies fn to the promotion and the referrer's account under the store's
// lock, once per referred tenant.
func (s *Store) GrantReferralReward(ctx context.Context, g app.ReferralGrant, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error)) (domain.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == g.AppID && p.ID == g.PromotionID })
	switch {
	case i < 0:
		return domain.Account{}, domain.ErrPromotionNotFound
	case s.rewarded[g.ReferredTenantID]:
		return domain.Account{}, domain.ErrReferralRewarded
	}
	return s.applyPromotion(ctx, i, g.ReferrerTenantID, fn, func(p domain.Promotion) {
		s.rewarded[g.ReferredTenantID] = true
		s.recordUse(p, domain.PromotionUse{Kind: domain.UseReferralReward, TenantID: g.ReferrerTenantID, UserID: g.ReferrerUserID,
			ReferredTenantID: g.ReferredTenantID, At: g.At})
	})
}

// applyPromotion runs fn on copies of promotion i and the tenant's account and, when it succeeds,
// stores both, records the use and queues fn's events. The caller holds the store's lock.
func (s *Store) applyPromotion(ctx context.Context, i int, tenantID string, fn func(*domain.Promotion, *domain.Account) ([]events.Event, error), record func(domain.Promotion)) (domain.Account, error) {
	p := s.promotions[i]
	a, err := s.withAccount(ctx, p.AppID, tenantID, func(a *domain.Account) ([]events.Event, error) { return fn(&p, a) })
	if err != nil {
		return domain.Account{}, err
	}
	s.promotions[i] = p
	record(p)
	return a, nil
}

// recordUse keeps a use of p with what p grants, at the database's precision (microseconds), so
// cursors compare alike on both stores. The caller holds the store's lock.
func (s *Store) recordUse(p domain.Promotion, u domain.PromotionUse) {
	u.PromotionID, u.Code, u.FreeUnits, u.FreeDays = p.ID, p.Code, p.FreeUnits, p.FreeDays
	u.At = u.At.UTC().Truncate(time.Microsecond)
	s.uses = append(s.uses, u)
}

// PromotionUses pages through the uses of the app's promotion, newest first.
func (s *Store) PromotionUses(_ context.Context, appID, promotionID string, after *domain.UseCursor, limit int) ([]domain.PromotionUse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.promotions, func(p domain.Promotion) bool { return p.AppID == appID && p.ID == promotionID }) {
		return nil, nil
	}
	return s.newestUses(func(u domain.PromotionUse) bool {
		return u.PromotionID == promotionID && (after == nil || after.Before(u))
	}, limit), nil
}

// TenantPromotionUses lists what the app's tenant received, newest first.
func (s *Store) TenantPromotionUses(_ context.Context, appID, tenantID string, limit int) ([]domain.PromotionUse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	apps := map[string]string{}
	for _, p := range s.promotions {
		apps[p.ID] = p.AppID
	}
	return s.newestUses(func(u domain.PromotionUse) bool { return u.TenantID == tenantID && apps[u.PromotionID] == appID }, limit), nil
}

// newestUses is the first limit uses that keep says, newest first (by the cursor's order). The
// caller holds the store's lock.
func (s *Store) newestUses(keep func(domain.PromotionUse) bool, limit int) []domain.PromotionUse {
	var out []domain.PromotionUse
	for _, u := range s.uses {
		if keep(u) {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b domain.PromotionUse) int {
		switch {
		case domain.CursorOf(a).Before(b): // b is older
			return -1
		case domain.CursorOf(b).Before(a):
			return 1
		}
		return 0
	})
	return out[:min(limit, len(out))]
}
