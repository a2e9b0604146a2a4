package domain

import (
	"testing"
	"time"
)

func TestAmountsInThePspyDecimalForm(t *testing.T) {
	cases := []struct {
		amount   int64
		currency string
		want     string
	}{
		{1000, "EUR", "10.00"}, {1, "EUR", "0.01"}, {123456, "USD", "1234.56"}, {1000, "JPY", "1000"}, {1234, "KWD", "1.234"},
	}
	for _, tc := range cases {
		if got := FormatMinor(tc.amount, tc.currency); got != tc.want {
			t.Errorf("FormatMinor(%d, %s) = %q, want %q", tc.amount, tc.currency, got, tc.want)
		}
	}
}

func TestTotalsAddExclusiveTaxRoundedHalfUp(t *testing.T) {
	price := CatalogPrice{Amount: 999, Currency: "EUR"}
	cases := []struct {
		name     string
		quantity int64
		tax      *CatalogTaxRate
		want     int64
	}{
		{"no tax", 3, nil, 2997},
		{"exclusive 19 %", 1, &CatalogTaxRate{BasisPoints: 1900}, 999 + 190},       // 189.81 rounds to 190
		{"exclusive 7 %, half up", 1, &CatalogTaxRate{BasisPoints: 750}, 999 + 75}, // 74.925 rounds to 75
		{"inclusive adds nothing", 2, &CatalogTaxRate{BasisPoints: 1900, Inclusive: true}, 1998},
	}
	for _, tc := range cases {
		if got := Total(price, tc.quantity, tc.tax); got != tc.want {
			t.Errorf("%s: Total = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestIntervalsMoveByCalendarUnits(t *testing.T) {
	start := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	cases := map[string]time.Time{
		"1 month":   time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC), // the short month's last day
		"12 months": time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC),
		"14 days":   time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC),
		"2 weeks":   time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC),
	}
	for interval, want := range cases {
		if got := AddInterval(start, interval); !got.Equal(want) {
			t.Errorf("AddInterval(%s) = %v, want %v", interval, got, want)
		}
	}
}

func TestParseMinorReadsExactlyTheCurrencysDecimals(t *testing.T) {
	tests := []struct {
		value, currency string
		want            int64
		ok              bool
	}{
		{"10.00", "EUR", 1000, true}, {"0.01", "EUR", 1, true}, {"1000", "JPY", 1000, true}, {"1.500", "KWD", 1500, true},
		{"10.0", "EUR", 0, false}, {"10", "EUR", 0, false}, {"10.000", "EUR", 0, false}, {"10.00", "JPY", 0, false},
		{"-1.00", "EUR", 0, false}, {"1,00", "EUR", 0, false}, {".50", "EUR", 0, false}, {"", "EUR", 0, false}, {"1e3", "JPY", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseMinor(tc.value, tc.currency)
		if (err == nil) != tc.ok || got != tc.want {
			t.Fatalf("ParseMinor(%q, %s) = %d, %v; want %d (ok %v)", tc.value, tc.currency, got, err, tc.want, tc.ok)
		}
		if tc.ok && FormatMinor(got, tc.currency) != tc.value {
			t.Fatalf("FormatMinor(%d, %s) = %q, want %q back", got, tc.currency, FormatMinor(got, tc.currency), tc.value)
		}
	}
}
