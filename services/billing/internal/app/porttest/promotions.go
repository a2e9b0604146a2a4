package porttest

import (
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

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
	{"PromotionLimitsAreStored", promotionLimitsStored},
	{"APromotionsUsesPageNewestFirstWithWhatTheyGranted", promotionUsesPaged},
	{"ATenantsPromotionUsesAreWhatItReceived", tenantPromotionUses},
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

func promotionLimitsStored(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	p := promotion(appID, "LIMITS", 5)
	if err := s.CreatePromotion(ctx, p); err != nil {
		t.Fatal(err)
	}
	until := instant.AddDate(0, 2, 0)
	want := must(s.UpdatePromotion(ctx, appID, p.ID, func(p *domain.Promotion) error {
		return p.EditLimits(domain.PromotionLimits{MaxRedemptions: ptr[int32](9), ValidFrom: &time.Time{}, ValidUntil: &until})
	}))
	if want.MaxRedemptions != 9 || !want.ValidFrom.IsZero() || !want.ValidUntil.Equal(until) {
		t.Fatalf("edited %+v", want)
	}
	if got := must(s.Promotions(ctx, appID)); !reflect.DeepEqual(got[0], want) {
		t.Fatalf("stored:\n got %+v\nwant %+v", got[0], want)
	}
}

func ptr[T any](v T) *T { return &v }

// useAt redeems the promotion for tenantID at at, by userID.
func useAt(t *testing.T, s app.Store, p domain.Promotion, tenantID, userID string, at time.Time) domain.PromotionUse {
	t.Helper()
	must(s.Redeem(ctx, app.Redemption{AppID: p.AppID, Code: p.Code, TenantID: tenantID, UserID: userID, At: at}, applying(newEvent(t, p.AppID), nil)))
	return domain.PromotionUse{Kind: domain.UseRedemption, PromotionID: p.ID, Code: p.Code, TenantID: tenantID, UserID: userID,
		FreeUnits: p.FreeUnits, FreeDays: p.FreeDays, At: at}
}

// rewardAt grants the promotion to referrerTenantID for referredTenantID at at.
func rewardAt(t *testing.T, s app.Store, p domain.Promotion, referredTenantID, referrerTenantID, referrerUserID string, at time.Time) domain.PromotionUse {
	t.Helper()
	g := app.ReferralGrant{AppID: p.AppID, PromotionID: p.ID, ReferredTenantID: referredTenantID, ReferrerTenantID: referrerTenantID,
		ReferrerUserID: referrerUserID, At: at}
	must(s.GrantReferralReward(ctx, g, applying(newEvent(t, p.AppID), nil)))
	return domain.PromotionUse{Kind: domain.UseReferralReward, PromotionID: p.ID, Code: p.Code, TenantID: referrerTenantID,
		UserID: referrerUserID, ReferredTenantID: referredTenantID, FreeUnits: p.FreeUnits, FreeDays: p.FreeDays, At: at}
}

func promotionUsesPaged(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	p, other := promotion(appID, "PAGED", 0), promotion(appID, "OTHER", 0)
	for _, q := range []domain.Promotion{p, other} {
		if err := s.CreatePromotion(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	at := func(minutes int) time.Time { return instant.Add(time.Duration(minutes) * time.Minute) }
	referrer := uuid.NewString()
	// Two redemptions and a reward in the same microsecond: the keyset still orders them.
	var uses []domain.PromotionUse
	for _, minute := range []int{1, 5, 5, 3} {
		uses = append(uses, useAt(t, s, p, uuid.NewString(), uuid.NewString(), at(minute)))
	}
	uses = append(uses, rewardAt(t, s, p, uuid.NewString(), referrer, uuid.NewString(), at(5)), rewardAt(t, s, p, uuid.NewString(), referrer, uuid.NewString(), at(2)))
	useAt(t, s, other, uuid.NewString(), uuid.NewString(), at(4))
	want := slices.Clone(uses)
	slices.SortFunc(want, func(a, b domain.PromotionUse) int {
		if domain.CursorOf(a).Before(b) {
			return -1
		}
		return 1
	})
	if want[0].At != at(5) || want[0].Kind != domain.UseReferralReward || want[len(want)-1].At != at(1) {
		t.Fatalf("the expected order is not newest first: %+v", want)
	}

	var got []domain.PromotionUse
	var after *domain.UseCursor
	for page := 0; ; page++ {
		items := must(s.PromotionUses(ctx, appID, p.ID, after, 4))
		if page > 2 || len(items) > 4 {
			t.Fatalf("page %d has %d items", page, len(items))
		}
		got = append(got, items...)
		if len(items) < 4 {
			break
		}
		c := domain.CursorOf(items[len(items)-1])
		after = &c
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("uses by pages of 4:\n got %+v\nwant %+v", got, want)
	}
	if got := must(s.PromotionUses(ctx, uuid.NewString(), p.ID, nil, 10)); len(got) != 0 {
		t.Fatalf("another app sees the promotion's uses: %+v", got)
	}
	if got := must(s.PromotionUses(ctx, appID, "not-a-uuid", nil, 10)); len(got) != 0 {
		t.Fatalf("a malformed id lists %+v", got)
	}
}

func tenantPromotionUses(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID, tenant := uuid.NewString(), uuid.NewString()
	code, friends := promotion(appID, "CODE", 0), promotion(appID, "FRIENDS", 0)
	friends.FreeUnits, friends.FreeDays = 7, 0
	for _, q := range []domain.Promotion{code, friends} {
		if err := s.CreatePromotion(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	redeemed := useAt(t, s, code, tenant, uuid.NewString(), instant.Add(time.Hour))
	rewarded := rewardAt(t, s, friends, uuid.NewString(), tenant, uuid.NewString(), instant.Add(2*time.Hour))
	// Not the tenant's: another tenant's redemption, and the reward its own first payment earned
	// someone else.
	useAt(t, s, code, uuid.NewString(), uuid.NewString(), instant.Add(3*time.Hour))
	rewardAt(t, s, friends, tenant, uuid.NewString(), uuid.NewString(), instant.Add(4*time.Hour))

	if got, want := must(s.TenantPromotionUses(ctx, appID, tenant, 10)), []domain.PromotionUse{rewarded, redeemed}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tenant's uses:\n got %+v\nwant %+v", got, want)
	}
	if got := must(s.TenantPromotionUses(ctx, appID, tenant, 1)); len(got) != 1 || got[0].Kind != domain.UseReferralReward {
		t.Fatalf("limit 1: %+v", got)
	}
	if got := must(s.TenantPromotionUses(ctx, uuid.NewString(), tenant, 10)); len(got) != 0 {
		t.Fatalf("another app sees the tenant's uses: %+v", got)
	}
}
