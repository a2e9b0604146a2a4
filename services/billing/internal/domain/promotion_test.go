package domain

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestRedeemAppliesUnitsDaysAndPaymentMethod(t *testing.T) {
	cases := []struct {
		name       string
		promo      Promotion
		state      State
		wantUnits  int64
		wantUntil  time.Time
		wantMethod string
	}{
		{"days count from now when the free period is over",
			Promotion{Active: true, FreeDays: 30, FreeUnits: 5}, State{FreeUntil: now.AddDate(0, 0, -3)},
			5, now.AddDate(0, 0, 30), PromoPaymentMethod},
		{"days extend a running free period from its end",
			Promotion{Active: true, FreeDays: 10}, State{FreeUntil: now.AddDate(0, 0, 4), FreeUnits: 2},
			2, now.AddDate(0, 0, 14), PromoPaymentMethod},
		{"units only leave the free period alone",
			Promotion{Active: true, FreeUnits: 7}, State{},
			7, time.Time{}, PromoPaymentMethod},
		{"a tenant with a subscription keeps its payment method",
			Promotion{Active: true, FreeDays: 1}, State{PspxSubscriptionID: "sub_1", PspxPaymentMethod: "card"},
			0, now.AddDate(0, 0, 1), "card"},
		{"a tenant with paid units keeps its payment method",
			Promotion{Active: true, FreeUnits: 1}, State{PaidUnits: 3, PspxPaymentMethod: "card"},
			1, time.Time{}, "card"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Account{Revision: 4, State: c.state}
			p := c.promo
			if err := p.Redeem(&a, now); err != nil {
				t.Fatal(err)
			}
			s := a.State
			if s.FreeUnits != c.wantUnits || !s.FreeUntil.Equal(c.wantUntil) || s.PspxPaymentMethod != c.wantMethod {
				t.Fatalf("units %d until %v method %q", s.FreeUnits, s.FreeUntil, s.PspxPaymentMethod)
			}
			if a.Revision != 5 || p.Redemptions != 1 {
				t.Fatalf("revision %d redemptions %d, want 5 and 1", a.Revision, p.Redemptions)
			}
		})
	}
}

func TestRedeemRefusesCodesThatDoNotApply(t *testing.T) {
	cases := map[string]Promotion{
		"inactive":        {Active: false, FreeDays: 1},
		"not yet valid":   {Active: true, FreeDays: 1, ValidFrom: now.Add(time.Minute)},
		"no longer valid": {Active: true, FreeDays: 1, ValidUntil: now},
		"exhausted":       {Active: true, FreeDays: 1, MaxRedemptions: 2, Redemptions: 2},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			a := Account{Revision: 1}
			if err := p.Redeem(&a, now); !errors.Is(err, ErrUnknownCode) {
				t.Fatalf("err %v, want ErrUnknownCode", err)
			}
			if a.Revision != 1 || !reflect.DeepEqual(a.State, State{}) {
				t.Fatalf("a refused redemption changed the account: %+v", a)
			}
		})
	}
}

func TestCreatePromotionValidates(t *testing.T) {
	ok := NewPromotion{Code: "welcome-10", Name: "Welcome", FreeDays: 10}
	if p, err := CreatePromotion(ok, "id", now); err != nil || p.Code != "WELCOME-10" || !p.Active {
		t.Fatalf("valid promotion: %+v, %v", p, err)
	}
	bad := map[string]func(*NewPromotion){
		"short code":      func(n *NewPromotion) { n.Code = "ab" },
		"code with space": func(n *NewPromotion) { n.Code = "a b c" },
		"blank name":      func(n *NewPromotion) { n.Name = " " },
		"gives nothing":   func(n *NewPromotion) { n.FreeDays = 0 },
		"negative units":  func(n *NewPromotion) { n.FreeUnits = -1 },
		"negative max":    func(n *NewPromotion) { n.MaxRedemptions = -1 },
		"empty window":    func(n *NewPromotion) { n.ValidFrom, n.ValidUntil = now, now },
	}
	for name, mutate := range bad {
		n := ok
		mutate(&n)
		if _, err := CreatePromotion(n, "id", now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckKeyTellsModesAndProvidersApart(t *testing.T) {
	cases := []struct {
		p    Provider
		test bool
		key  string
		ok   bool
	}{
		{Pspx, true, "sk_test_abcdefgh12", true},
		{Pspx, false, "sk_live_abcdefgh12", true},
		{Pspx, true, "sk_live_abcdefgh12", false},
		{Pspx, true, "test_abcdefghijklmnopqrstu", false},
		{Pspy, true, "test_abcdefghijklmnopqrstu", true},
		{Pspy, false, "live_abcdefghijklmnopqrstu", true},
		{Pspy, false, "test_abcdefghijklmnopqrstu", false},
		{Pspy, true, "", true},
	}
	for _, c := range cases {
		if err := CheckKey(c.p, c.test, c.key); (err == nil) != c.ok {
			t.Errorf("%s test=%v %q: err %v", c.p, c.test, c.key, err)
		}
	}
}

func TestCheckIntervalAcceptsPspyIntervals(t *testing.T) {
	for s, ok := range map[string]bool{"1 month": true, "12 months": true, "14 days": true, "1 week": true,
		"1 months": false, "2 month": false, "0 days": false, "1 year": false, "month": false, " 1 month": false} {
		if err := CheckInterval(s); (err == nil) != ok {
			t.Errorf("%q: err %v", s, err)
		}
	}
}

func TestEditLimitsRefusesAMaximumBelowTheUsesMade(t *testing.T) {
	n := func(v int32) *int32 { return &v }
	day := func(d int) *time.Time { v := time.Date(2026, 6, d, 0, 0, 0, 0, time.UTC); return &v }
	base := Promotion{Code: "SPRING", FreeUnits: 1, MaxRedemptions: 10, Redemptions: 4, ValidFrom: *day(1), ValidUntil: *day(20), Active: true}
	for _, tc := range []struct {
		name   string
		limits PromotionLimits
		field  string // "": accepted
		want   func(Promotion) bool
	}{
		{"below the uses made", PromotionLimits{MaxRedemptions: n(3)}, "maxRedemptions", nil},
		{"negative", PromotionLimits{MaxRedemptions: n(-2)}, "maxRedemptions", nil},
		{"nothing to change", PromotionLimits{}, "maxRedemptions", nil},
		{"an end before the kept start", PromotionLimits{ValidUntil: day(1)}, "validUntil", nil},
		{"a start after the kept end", PromotionLimits{ValidFrom: day(25)}, "validUntil", nil},
		{"exactly the uses made", PromotionLimits{MaxRedemptions: n(4)}, "", func(p Promotion) bool { return p.MaxRedemptions == 4 }},
		{"unlimited", PromotionLimits{MaxRedemptions: n(0)}, "", func(p Promotion) bool { return p.MaxRedemptions == 0 }},
		{"the end removed", PromotionLimits{ValidUntil: &time.Time{}}, "", func(p Promotion) bool { return p.ValidUntil.IsZero() && p.ValidFrom.Equal(*day(1)) }},
		{"both bounds moved", PromotionLimits{ValidFrom: day(21), ValidUntil: day(28)}, "", func(p Promotion) bool { return p.ValidFrom.Equal(*day(21)) && p.ValidUntil.Equal(*day(28)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			err := p.EditLimits(tc.limits)
			if got := fieldOf(err); got != tc.field {
				t.Fatalf("err %v, want field %q", err, tc.field)
			}
			if tc.field != "" {
				if p != base {
					t.Fatalf("a refused edit changed the promotion: %+v", p)
				}
				return
			}
			if !tc.want(p) || p.Redemptions != 4 || p.FreeUnits != 1 || p.Code != "SPRING" {
				t.Fatalf("edited %+v", p)
			}
		})
	}
}

func TestUseCursorsRoundTripAndRefuseWhatNoPageHandedOut(t *testing.T) {
	u := PromotionUse{Kind: UseReferralReward, TenantID: "0b5c1d8e-0000-4000-8000-000000000001",
		ReferredTenantID: "0b5c1d8e-0000-4000-8000-000000000002", At: time.Date(2026, 6, 1, 9, 0, 0, 123456000, time.UTC)}
	c := CursorOf(u)
	if c.Key != u.ReferredTenantID {
		t.Fatalf("a reward is keyed by its referred tenant, got %q", c.Key)
	}
	got, err := DecodeUseCursor(c.Encode())
	if err != nil || got != c {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, bad := range []string{"", "!!", enc("1|0"), enc("x|0|0b5c1d8e-0000-4000-8000-000000000001"), enc("1|2|0b5c1d8e-0000-4000-8000-000000000001"),
		enc("1|0|0B5C1D8E-0000-4000-8000-000000000001"), enc("1|0|not-a-uuid"), strings.Repeat("A", 300)} {
		if _, err := DecodeUseCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	older := u
	older.At = u.At.Add(-time.Microsecond)
	redemption := u
	redemption.Kind = UseRedemption
	if !c.Before(older) || !c.Before(redemption) || c.Before(u) {
		t.Fatal("a page after a use holds the older uses and, at the same time, the redemptions")
	}
}
