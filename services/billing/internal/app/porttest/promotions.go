package porttest

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// promotionCases are the Promotions port's cases: the promotions themselves, then their two uses,
// a tenant's redemption of a code and a referred tenant's reward to its referrer, each applied
// with its account change exactly once.
var promotionCases = []testCase{
	{"PromotionCodesAreUniquePerApp", promotionCodesUnique},
	{"RedeemStoresPromotionAccountAndEventsTogether", redeemStoresTogether},
	{"FailedRedeemStoresNothing", failedRedeem},
	{"ATenantRedeemsAPromotionOnce", redeemOnce},
	{"ConcurrentRedemptionsOfTheLastUseLetOneWin", concurrentLastUse},
	{"AReferredTenantEarnsItsReferrerOneReward", referralRewardOncePerReferredTenant},
	{"FailedReferralRewardStoresNothing", failedReferralRewardStoresNothing},
	{"ConcurrentRewardsForOneReferredTenantApplyOnce", concurrentReferralRewardsApplyOnce},
}

func promotion(appID, code string, most int32) domain.Promotion {
	return domain.Promotion{ID: uuid.NewString(), AppID: appID, Code: code, Name: "Welcome", Description: "ten days",
		FreeUnits: 2, FreeDays: 10, ValidFrom: instant, ValidUntil: instant.AddDate(1, 0, 0),
		MaxRedemptions: most, Active: true, CreatedAt: instant}
}

func promotionCodesUnique(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	p := promotion(appID, "WELCOME", 0)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePromotion(ctx, promotion(appID, "WELCOME", 0)); !errors.Is(err, domain.ErrCodeTaken) {
		t.Fatalf("same code again: %v", err)
	}
	if err := s.CreatePromotion(ctx, promotion(uuid.NewString(), "WELCOME", 0)); err != nil {
		t.Fatalf("another app's same code: %v", err)
	}
	list := must(s.Promotions(ctx, appID))
	if len(list) != 1 || !reflect.DeepEqual(list[0], p) {
		t.Fatalf("list:\n got %+v\nwant %+v", list, p)
	}
	off := must(s.UpdatePromotion(ctx, appID, p.ID, func(p *domain.Promotion) error { p.Active = false; return nil }))
	if got := must(s.Promotions(ctx, appID)); got[0].Active || off.Active {
		t.Fatal("deactivation not stored")
	}
	if _, err := s.UpdatePromotion(ctx, uuid.NewString(), p.ID, func(*domain.Promotion) error { return nil }); !errors.Is(err, domain.ErrPromotionNotFound) {
		t.Fatalf("another app updated the promotion: %v", err)
	}
}

// redeemWith redeems code for tenantID, applying the promotion as the use case does.
func redeemWith(s app.Store, appID, code, tenantID string, ev events.Event) (domain.Account, error) {
	return s.Redeem(ctx, app.Redemption{AppID: appID, Code: code, TenantID: tenantID, UserID: uuid.NewString()}, applying(ev, nil))
}

// applying applies a promotion to an account as the use cases do, emitting ev, then fails with
// fail (nil: it succeeds).
func applying(ev events.Event, fail error) func(*domain.Promotion, *domain.Account) ([]events.Event, error) {
	return func(p *domain.Promotion, a *domain.Account) ([]events.Event, error) {
		if err := p.Redeem(a, instant); err != nil {
			return nil, err
		}
		return []events.Event{ev}, fail
	}
}

func redeemStoresTogether(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	p := promotion(appID, "SPRING", 0)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, appID)
	a := must(redeemWith(s, appID, "SPRING", tenantID, ev))
	if a.Revision != 1 || a.State.FreeUnits != 2 || !a.State.FreeUntil.Equal(instant.AddDate(0, 0, 10)) {
		t.Fatalf("returned account %+v", a)
	}
	if got := must(s.Account(ctx, appID, tenantID)); !reflect.DeepEqual(got, a) {
		t.Fatalf("stored account:\n got %+v\nwant %+v", got, a)
	}
	if got := must(s.Promotions(ctx, appID)); got[0].Redemptions != 1 {
		t.Fatalf("redemptions %d", got[0].Redemptions)
	}
	if ids := pending(t, outbox); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("outbox %v, want [%s]", ids, ev.ID)
	}
}

func failedRedeem(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	if err := s.CreatePromotion(ctx, promotion(appID, "SPRING", 0)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, err := s.Redeem(ctx, app.Redemption{AppID: appID, Code: "SPRING", TenantID: tenantID, UserID: uuid.NewString()},
		func(p *domain.Promotion, a *domain.Account) ([]events.Event, error) {
			_ = p.Redeem(a, instant)
			return nil, boom
		})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if a := must(s.Account(ctx, appID, tenantID)); a.Revision != 0 {
		t.Fatalf("a failed redemption stored the account: %+v", a)
	}
	if got := must(s.Promotions(ctx, appID)); got[0].Redemptions != 0 {
		t.Fatal("a failed redemption was counted")
	}
	if ids := pending(t, outbox); len(ids) != 0 {
		t.Fatalf("a failed redemption left events %v", ids)
	}
	if _, err := redeemWith(s, appID, "SPRING", tenantID, newEvent(t, appID)); err != nil {
		t.Fatalf("the tenant cannot redeem after a failed attempt: %v", err)
	}
}

func redeemOnce(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	if err := s.CreatePromotion(ctx, promotion(appID, "ONCE", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := redeemWith(s, appID, "ONCE", tenantID, newEvent(t, appID)); err != nil {
		t.Fatal(err)
	}
	if _, err := redeemWith(s, appID, "ONCE", tenantID, newEvent(t, appID)); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("second redemption: %v", err)
	}
	if _, err := redeemWith(s, appID, "NOPE", tenantID, newEvent(t, appID)); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("unknown code: %v", err)
	}
	if _, err := redeemWith(s, uuid.NewString(), "ONCE", tenantID, newEvent(t, appID)); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("another app's code: %v", err)
	}
	if a := must(s.Account(ctx, appID, tenantID)); a.Revision != 1 || a.State.FreeUnits != 2 {
		t.Fatalf("account after a refused second redemption: %+v", a)
	}
}

func concurrentLastUse(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	if err := s.CreatePromotion(ctx, promotion(appID, "LAST", 1)); err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = redeemWith(s, appID, "LAST", uuid.NewString(), newEvent(t, appID))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, domain.ErrUnknownCode):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if got := must(s.Promotions(ctx, appID)); won != 1 || got[0].Redemptions != 1 {
		t.Fatalf("%d redemptions won, promotion counts %d; want exactly 1", won, got[0].Redemptions)
	}
}

// grantWith grants the reward of referredTenantID to referrerTenantID, applying the promotion as
// the use case does, or failing with fail.
func grantWith(s app.Store, appID, promotionID, referredTenantID, referrerTenantID string, ev events.Event, fail error) (domain.Account, error) {
	g := app.ReferralGrant{AppID: appID, PromotionID: promotionID, ReferredTenantID: referredTenantID,
		ReferrerTenantID: referrerTenantID, ReferrerUserID: uuid.NewString(), At: instant}
	return s.GrantReferralReward(ctx, g, applying(ev, fail))
}

func referralRewardOncePerReferredTenant(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, referrer := uuid.NewString(), uuid.NewString()
	p := promotion(appID, "FRIENDS", 0)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, appID)
	a := must(grantWith(s, appID, p.ID, uuid.NewString(), referrer, ev, nil))
	if a.TenantID != referrer || a.Revision != 1 || a.State.FreeUnits != 2 {
		t.Fatalf("referrer's account %+v", a)
	}
	if got := must(s.Account(ctx, appID, referrer)); got.Revision != 1 || got.State.FreeUnits != 2 {
		t.Fatalf("stored referrer's account %+v", got)
	}
	if ids := pending(t, outbox); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("outbox %v, want [%s]", ids, ev.ID)
	}

	second := uuid.NewString()
	if _, err := grantWith(s, appID, p.ID, second, referrer, newEvent(t, appID), nil); err != nil {
		t.Fatalf("a second referred tenant earns the referrer another reward: %v", err)
	}
	if _, err := grantWith(s, appID, p.ID, second, uuid.NewString(), newEvent(t, appID), nil); !errors.Is(err, domain.ErrReferralRewarded) {
		t.Fatalf("a referred tenant's second reward: %v", err)
	}
	if _, err := redeemWith(s, appID, "FRIENDS", referrer, newEvent(t, appID)); err != nil {
		t.Fatalf("rewards do not use up the referrer's own redemption of the code: %v", err)
	}
	if got := must(s.Account(ctx, appID, referrer)); got.Revision != 3 || got.State.FreeUnits != 6 {
		t.Fatalf("referrer's account after two rewards and a redemption: %+v", got)
	}
	if got := must(s.Promotions(ctx, appID)); got[0].Redemptions != 3 {
		t.Fatalf("redemptions %d, want 3 (rewards count toward the promotion's maximum)", got[0].Redemptions)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		if _, err := grantWith(s, appID, id, uuid.NewString(), referrer, newEvent(t, appID), nil); !errors.Is(err, domain.ErrPromotionNotFound) {
			t.Fatalf("promotion %q: %v", id, err)
		}
	}
	if _, err := grantWith(s, uuid.NewString(), p.ID, uuid.NewString(), referrer, newEvent(t, appID), nil); !errors.Is(err, domain.ErrPromotionNotFound) {
		t.Fatalf("another app's promotion: %v", err)
	}
}

func failedReferralRewardStoresNothing(t *testing.T, s app.Store, outbox events.OutboxSource) {
	appID, referred, referrer := uuid.NewString(), uuid.NewString(), uuid.NewString()
	p := promotion(appID, "FRIENDS", 1)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := grantWith(s, appID, p.ID, referred, referrer, newEvent(t, appID), boom); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if a := must(s.Account(ctx, appID, referrer)); a.Revision != 0 {
		t.Fatalf("a failed reward stored the account: %+v", a)
	}
	if got := must(s.Promotions(ctx, appID)); got[0].Redemptions != 0 {
		t.Fatal("a failed reward was counted")
	}
	if ids := pending(t, outbox); len(ids) != 0 {
		t.Fatalf("a failed reward left events %v", ids)
	}
	if _, err := grantWith(s, appID, p.ID, referred, referrer, newEvent(t, appID), nil); err != nil {
		t.Fatalf("the reward cannot be granted after a failed attempt: %v", err)
	}
	if _, err := grantWith(s, appID, p.ID, uuid.NewString(), referrer, newEvent(t, appID), nil); !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("a reward beyond the promotion's maximum: %v", err)
	}
}

func concurrentReferralRewardsApplyOnce(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID, referred, referrer := uuid.NewString(), uuid.NewString(), uuid.NewString()
	p := promotion(appID, "FRIENDS", 0)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = grantWith(s, appID, p.ID, referred, referrer, newEvent(t, appID), nil) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, domain.ErrReferralRewarded):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if a := must(s.Account(ctx, appID, referrer)); won != 1 || a.Revision != 1 || a.State.FreeUnits != 2 {
		t.Fatalf("%d grants won; referrer's account %+v", won, a)
	}
}
