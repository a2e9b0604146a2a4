package pspy

import (
	"testing"
	"time"
)

func TestIntervalsCountFromTheStartAndClampToTheMonthsLastDay(t *testing.T) {
	date := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	cases := []struct {
		interval, start string
		k               int
		want            string
	}{
		{"1 month", "2026-01-31", 1, "2026-02-28"},
		{"1 month", "2026-01-31", 2, "2026-03-31"},
		{"1 month", "2024-01-31", 1, "2024-02-29"},
		{"3 months", "2026-11-30", 1, "2027-02-28"},
		{"12 months", "2026-03-15", 2, "2028-03-15"},
		{"1 year", "2024-02-29", 1, "2025-02-28"},
		{"1 year", "2024-02-29", 4, "2028-02-29"},
		{"14 days", "2026-12-25", 1, "2027-01-08"},
		{"2 weeks", "2026-12-25", 2, "2027-01-22"},
		{"1 day", "2026-02-28", 1, "2026-03-01"},
	}
	for _, c := range cases {
		iv, ok := parseInterval(c.interval)
		if !ok {
			t.Fatalf("%q refused", c.interval)
		}
		if got := iv.after(date(c.start), c.k).Format(time.DateOnly); got != c.want {
			t.Errorf("%s from %s times %d: %s, want %s", c.interval, c.start, c.k, got, c.want)
		}
	}
	for _, bad := range []string{"", "month", "1month", "0 months", "1 fortnight", "-1 days", "1000 days", " 1 day"} {
		if _, ok := parseInterval(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestMoneyRendersTheCurrencysDigits(t *testing.T) {
	cases := []struct {
		m    money
		want string
	}{
		{money{"EUR", 1}, "0.01"}, {money{"EUR", 1000}, "10.00"}, {money{"USD", 123456}, "1234.56"}, {money{"JPY", 1000}, "1000"},
	}
	for _, c := range cases {
		if got := c.m.value(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.m, got, c.want)
		}
	}
}
