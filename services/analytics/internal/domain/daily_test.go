package domain

import (
	"reflect"
	"testing"
	"time"
)

func TestAddMoneyKeepsOneSumPerCurrencyInCurrencyOrder(t *testing.T) {
	var list []Money
	for _, m := range []Money{{"USD", 300}, {"EUR", 500}, {"CHF", 100}, {"EUR", 250}, {"USD", 1}} {
		list = AddMoney(list, m.Currency, m.Amount)
	}
	if want := []Money{{"CHF", 100}, {"EUR", 750}, {"USD", 301}}; !reflect.DeepEqual(list, want) {
		t.Fatalf("got %v, want %v", list, want)
	}
}

func TestCurrencyCodesAreUpperCaseLetters(t *testing.T) {
	tests := []struct {
		in    string
		want  string
		valid bool
	}{
		{"eur", "EUR", true}, {" Usd ", "USD", true}, {"EUR", "EUR", true},
		{"", "", false}, {"EU", "EU", false}, {"EURO", "EURO", false}, {"E1R", "E1R", false}, {"ÉUR", "ÉUR", false},
	}
	for _, tc := range tests {
		got := Currency(tc.in)
		if got != tc.want || ValidCurrency(got) != tc.valid {
			t.Fatalf("Currency(%q) = %q (valid %v), want %q (valid %v)", tc.in, got, ValidCurrency(got), tc.want, tc.valid)
		}
	}
}

func TestASeriesRowIsFoundByItsUTCDay(t *testing.T) {
	s := NewSeries("app", Range{From: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)})
	tests := []struct {
		at   time.Time
		want int // index, -1 for none
	}{
		{time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(2026, 3, 6, 23, 59, 59, 0, time.UTC), 2},
		{time.Date(2026, 3, 7, 0, 30, 0, 0, time.FixedZone("CET", 3600)), 2}, // 23:30 UTC on the 6th
		{time.Date(2026, 3, 3, 23, 59, 59, 0, time.UTC), -1},
		{time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), -1},
	}
	for _, tc := range tests {
		row := s.Row(tc.at)
		switch {
		case tc.want < 0 && row != nil:
			t.Fatalf("Row(%v) = %v, want none", tc.at, row.Day)
		case tc.want >= 0 && row != &s.Rows[tc.want]:
			t.Fatalf("Row(%v) is not row %d", tc.at, tc.want)
		}
	}
}

func TestCountActiveChangesStartsFromTheDayBeforeAndIgnoresDaysOutsideTheRange(t *testing.T) {
	r := Range{From: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)}
	at := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name    string
		before  int64
		changes []ActiveChange
		want    []int64
	}{
		{"nothing", 0, nil, []int64{0, 0, 0}},
		{"running before the range", 3, nil, []int64{3, 3, 3}},
		{"a start and an end inside", 1, []ActiveChange{{at(5), 2}, {at(6), -3}}, []int64{1, 3, 0}},
		{"changes outside the range", 2, []ActiveChange{{at(3), 5}, {at(7), -2}, {at(4), -1}}, []int64{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSeries("app", r)
			s.CountActiveChanges(tc.before, tc.changes)
			for i, row := range s.Rows {
				if row.ActiveSubscriptions != tc.want[i] {
					t.Fatalf("day %d: %d active, want %d", i, row.ActiveSubscriptions, tc.want[i])
				}
			}
		})
	}
}
