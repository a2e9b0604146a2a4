package console

import (
	"net/url"
	"testing"
)

func TestBillingFormsAcceptOnlyWholeNumbersInRangeAndDaysOrTimes(t *testing.T) {
	promotion := func(kv ...string) url.Values {
		v := url.Values{"action": {"promotion"}, "code": {"SPRING"}, "name": {"Spring"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string // "" when accepted
	}{
		{"a promotion with free days only", promotion("free_days", "30"), ""},
		{"a day and an RFC 3339 time as bounds", promotion("valid_from", "2027-01-01", "valid_until", "2027-01-31T23:00:00+01:00"), ""},
		{"units above billing's most", promotion("free_units", "1000001"), "free_units"},
		{"days with a sign", promotion("free_days", "+3"), "free_days"},
		{"a fraction of a unit", promotion("free_units", "1.5"), "free_units"},
		{"an exponent", promotion("max_redemptions", "1e3"), "max_redemptions"},
		{"a maximum beyond int32", promotion("max_redemptions", "2147483648"), "max_redemptions"},
		{"a day that does not exist", promotion("valid_from", "2027-02-30"), "valid_from"},
		{"no code", promotion("code", ""), "code"},
		{"a code longer than billing's", promotion("code", "A234567890123456789012345678901234567890123456789012345678901234X"), "code"},
		{"a price of nothing", url.Values{"action": {"price"}, "product_name": {"x"}, "amount": {"0"}, "currency": {"EUR"}}, "amount"},
		{"a price without an amount", url.Values{"action": {"price"}, "product_name": {"x"}, "currency": {"EUR"}}, "amount"},
		{"a four-letter currency", url.Values{"action": {"price"}, "product_name": {"x"}, "amount": {"1"}, "currency": {"EURO"}}, "currency"},
		{"a tax rate above 100 %", url.Values{"action": {"taxRate"}, "display_name": {"VAT"}, "basis_points": {"10001"}}, "basis_points"},
		{"a tax rate inclusive as anything but yes", url.Values{"action": {"taxRate"}, "display_name": {"VAT"}, "basis_points": {"700"}, "inclusive": {"on"}}, "inclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := billingFrom(tc.form)
			if got := refused(err); got != tc.field {
				t.Errorf("refused %q (%v), want %q", got, err, tc.field)
			}
		})
	}
}

func TestPromotionChangesNeedAKnownActionAndValidLimits(t *testing.T) {
	for _, tc := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"action": {"deactivate"}}, ""},
		{url.Values{"action": {"activate"}}, ""},
		{url.Values{"action": {"limits"}}, ""}, // every limit removed: unlimited, no bounds
		{url.Values{"action": {"limits"}, "max_redemptions": {"-1"}}, "max_redemptions"},
		{url.Values{"action": {"limits"}, "valid_until": {"tomorrow"}}, "valid_until"},
		{url.Values{"action": {"delete"}}, "action"},
	} {
		if _, err := promotionChangeFrom(tc.form); refused(err) != tc.field {
			t.Errorf("%v: refused %q, want %q", tc.form, refused(err), tc.field)
		}
	}
}

func TestCatalogAmountsAndRatesShowTwoDecimalsAndBoundsTheirDayWhenMidnight(t *testing.T) {
	var f frame
	for _, tc := range []struct{ got, want string }{
		{f.Money(1, "EUR"), "0.01 EUR"},
		{f.Money(1250, "EUR"), "12.50 EUR"},
		{f.Money(100_000_000, "USD"), "1000000.00 USD"},
		{f.Percent(0), "0.00 %"},
		{f.Percent(1900), "19.00 %"},
		{f.Percent(750), "7.50 %"},
		{f.Day("2027-01-01T00:00:00Z"), "2027-01-01"},
		{f.Day("2027-01-01T08:30:00Z"), "2027-01-01T08:30:00Z"},
		{f.Day(""), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
