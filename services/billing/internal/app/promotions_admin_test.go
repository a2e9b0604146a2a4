package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// oneAppDirectory is identity and tenant for one app: every user id names its own tenant of the
// app, and every tenant of the app is live.
type oneAppDirectory struct {
	app.Users
	appID string
}

func (d oneAppDirectory) User(_ context.Context, appID, userID string) (app.UserRef, error) {
	if appID != d.appID {
		return app.UserRef{}, fault.NotFound("User not found")
	}
	return app.UserRef{ID: userID, TenantID: tenantOf(userID)}, nil
}

func (d oneAppDirectory) Tenant(_ context.Context, appID, tenantID string) (app.TenantRef, error) {
	if appID != d.appID {
		return app.TenantRef{}, fault.NotFound("Tenant not found")
	}
	return app.TenantRef{ID: tenantID}, nil
}

func (oneAppDirectory) Apply(context.Context, domain.Account) error { return nil }

// tenantOf is the tenant oneAppDirectory gives a user: the user's id with another first digit.
func tenantOf(userID string) string { return "f" + userID[1:] }

// promotionAdmin is billing on a memory store for one app, its clock moved by the caller.
type promotionAdmin struct {
	svc   *app.Service
	appID string
	now   time.Time
}

func newPromotionAdmin(t *testing.T) *promotionAdmin {
	t.Helper()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &promotionAdmin{appID: uuid.NewString(), now: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	dir := oneAppDirectory{appID: f.appID}
	f.svc, err = app.New(app.Config{Store: memory.New(&events.MemoryOutbox{}), Users: dir, Tenants: dir, Box: box,
		NewID: uuid.NewString, PublicURL: "https://berth.example", Clock: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// redeem has a new user redeem code a minute after the last redemption, and returns the user.
func (f *promotionAdmin) redeem(t *testing.T, code string) string {
	t.Helper()
	f.now = f.now.Add(time.Minute)
	user := uuid.NewString()
	if err := f.svc.RedeemPromotionCode(context.Background(), f.appID, user, code); err != nil {
		t.Fatalf("redeem %s: %v", code, err)
	}
	return user
}

func TestPromotionLimitEditsNeverGoBelowTheRedemptionsMade(t *testing.T) {
	ctx := context.Background()
	f := newPromotionAdmin(t)
	p, err := f.svc.CreatePromotion(ctx, domain.NewPromotion{AppID: f.appID, Code: "SPRING", Name: "Spring", FreeUnits: 3, MaxRedemptions: 5})
	if err != nil {
		t.Fatal(err)
	}
	f.redeem(t, "SPRING")
	f.redeem(t, "SPRING")
	n := func(v int32) *int32 { return &v }
	at := func(s string) *time.Time { v, _ := time.Parse(time.DateOnly, s); return &v }
	for _, tc := range []struct {
		name       string
		appID, id  string
		limits     domain.PromotionLimits
		wantField  string // "" : accepted
		wantAbsent bool
	}{
		{"a maximum below the two redemptions", f.appID, p.ID, domain.PromotionLimits{MaxRedemptions: n(1)}, "maxRedemptions", false},
		{"a negative maximum", f.appID, p.ID, domain.PromotionLimits{MaxRedemptions: n(-1)}, "maxRedemptions", false},
		{"no limit named", f.appID, p.ID, domain.PromotionLimits{}, "maxRedemptions", false},
		{"an end before the start", f.appID, p.ID, domain.PromotionLimits{ValidFrom: at("2026-07-01"), ValidUntil: at("2026-06-30")}, "validUntil", false},
		{"a malformed promotion id", f.appID, "SPRING", domain.PromotionLimits{MaxRedemptions: n(3)}, "promotionId", false},
		{"a malformed app id", "app", p.ID, domain.PromotionLimits{MaxRedemptions: n(3)}, "appId", false},
		{"another app's promotion", uuid.NewString(), p.ID, domain.PromotionLimits{MaxRedemptions: n(3)}, "", true},
		{"unlimited", f.appID, p.ID, domain.PromotionLimits{MaxRedemptions: n(0)}, "", false},
		{"exactly the redemptions made, with an end", f.appID, p.ID, domain.PromotionLimits{MaxRedemptions: n(2), ValidUntil: at("2027-01-01")}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := promotionNamed(t, f, p.ID)
			got, err := f.svc.UpdatePromotionLimits(ctx, tc.appID, tc.id, tc.limits)
			switch {
			case tc.wantAbsent:
				if !errors.Is(err, domain.ErrPromotionNotFound) {
					t.Fatalf("err = %v, want not found", err)
				}
			case tc.wantField != "":
				if fe := fieldOf(err); fe != tc.wantField {
					t.Fatalf("err = %v (field %q), want a refusal of %s", err, fe, tc.wantField)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if tc.limits.MaxRedemptions != nil && got.MaxRedemptions != *tc.limits.MaxRedemptions {
					t.Fatalf("maxRedemptions = %d", got.MaxRedemptions)
				}
				return
			}
			if after := promotionNamed(t, f, p.ID); after != before {
				t.Fatalf("a refused edit changed the promotion:\n%+v\n%+v", before, after)
			}
		})
	}
	final := promotionNamed(t, f, p.ID)
	if final.MaxRedemptions != 2 || !final.ValidUntil.Equal(*at("2027-01-01")) || final.Redemptions != 2 || final.FreeUnits != 3 {
		t.Fatalf("after the edits: %+v", final)
	}
	err = f.svc.RedeemPromotionCode(ctx, f.appID, uuid.NewString(), "SPRING")
	if !errors.Is(err, domain.ErrUnknownCode) {
		t.Fatalf("a third redemption beyond the new maximum of 2: %v", err)
	}
}

func promotionNamed(t *testing.T, f *promotionAdmin, id string) domain.Promotion {
	t.Helper()
	ps, err := f.svc.ListAppPromotions(context.Background(), f.appID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("promotion %s not listed", id)
	return domain.Promotion{}
}

func TestPromotionRedemptionsPageNewestFirstAndTheLastPageHasNoCursor(t *testing.T) {
	ctx := context.Background()
	f := newPromotionAdmin(t)
	p, err := f.svc.CreatePromotion(ctx, domain.NewPromotion{AppID: f.appID, Code: "PAGES", Name: "Pages", FreeDays: 7})
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for range 4 {
		users = append([]string{f.redeem(t, "PAGES")}, users...) // newest first
	}
	for _, tc := range []struct {
		limit int
		pages []int
	}{{limit: 2, pages: []int{2, 2}}, {limit: 3, pages: []int{3, 1}}, {limit: 4, pages: []int{4}}, {limit: 0, pages: []int{4}}} {
		var got []string
		cursor := ""
		for i, want := range tc.pages {
			page, err := f.svc.PromotionRedemptions(ctx, f.appID, p.ID, tc.limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Uses) != want || (page.Next == "") != (i == len(tc.pages)-1) {
				t.Fatalf("limit %d, page %d: %d uses, next %q", tc.limit, i, len(page.Uses), page.Next)
			}
			for _, u := range page.Uses {
				if u.Kind != domain.UseRedemption || u.FreeDays != 7 || u.Code != "PAGES" || u.TenantID != tenantOf(u.UserID) {
					t.Fatalf("use %+v", u)
				}
				got = append(got, u.UserID)
			}
			cursor = page.Next
		}
		if len(got) != len(users) || got[0] != users[0] || got[3] != users[3] {
			t.Fatalf("limit %d: users %v, want %v", tc.limit, got, users)
		}
	}
	for name, tc := range map[string]struct {
		limit          int
		cursor, field  string
		promotion, app string
	}{
		"a limit above 100":           {limit: 101, field: "limit"},
		"a negative limit":            {limit: -1, field: "limit"},
		"a cursor no page handed out": {cursor: "bm90LWEtY3Vyc29y", field: "cursor"},
		"a cursor that is not base64": {cursor: "%%%", field: "cursor"},
		"a malformed promotion id":    {promotion: "PAGES", field: "promotionId"},
	} {
		promotion := p.ID
		if tc.promotion != "" {
			promotion = tc.promotion
		}
		if _, err := f.svc.PromotionRedemptions(ctx, f.appID, promotion, tc.limit, tc.cursor); fieldOf(err) != tc.field {
			t.Errorf("%s: %v, want a refusal of %s", name, err, tc.field)
		}
	}
	if _, err := f.svc.PromotionRedemptions(ctx, uuid.NewString(), p.ID, 0, ""); !errors.Is(err, domain.ErrPromotionNotFound) {
		t.Fatalf("another app's promotion: %v", err)
	}
}

func TestTenantBillingShowsTheGrantsAndWhyTheTenantIsFrozen(t *testing.T) {
	ctx := context.Background()
	f := newPromotionAdmin(t)
	if _, err := f.svc.CreatePromotion(ctx, domain.NewPromotion{AppID: f.appID, Code: "GIFT", Name: "Gift", FreeUnits: 4}); err != nil {
		t.Fatal(err)
	}
	tenant := tenantOf(f.redeem(t, "GIFT"))
	if err := f.svc.SetTenantFrozen(ctx, f.appID, tenant, true); err != nil {
		t.Fatal(err)
	}
	b, err := f.svc.GetTenantBilling(ctx, f.appID, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	if b.Account.State.FreeUnits != 4 || b.Account.State.FrozenReason() != "operator" || len(b.Grants) != 1 || b.Grants[0].FreeUnits != 4 {
		t.Fatalf("tenant billing %+v", b)
	}
	if len(b.Payments) != 0 || b.Invoices.Invoices == nil || len(b.Invoices.Invoices) != 0 {
		t.Fatalf("a tenant without a connection has payments %v, invoices %v", b.Payments, b.Invoices)
	}
	if _, err := f.svc.GetTenantBilling(ctx, uuid.NewString(), tenant, false); !fault.Is(err, fault.KindNotFound) {
		t.Fatalf("another app's view of the tenant: %v", err)
	}
	if _, err := f.svc.GetTenantBilling(ctx, f.appID, "tenant", false); fieldOf(err) != "tenantId" {
		t.Fatalf("a malformed tenant id: %v", err)
	}
}

// fieldOf is the field an invalid-input fault names ("" for any other error, or none).
func fieldOf(err error) string {
	if f, ok := fault.As(err); ok && f.Kind() == fault.KindInvalid {
		return f.Field()
	}
	return ""
}
