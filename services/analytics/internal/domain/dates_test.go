package domain_test

import (
	"github.com/berthhq/berth/pkg/fault"
	"testing"
	"time"

	"github.com/berthhq/berth/services/analytics/internal/domain"
)

func TestParseRangeValidatesTheDocumentedRules(t *testing.T) {
	tests := []struct {
		name      string
		from, to  string
		wantField string // "" = valid
		wantDays  int
	}{
		{"one day", "2026-03-04", "2026-03-04", "", 1},
		{"a leap year's February 29", "2024-02-29", "2024-03-01", "", 2},
		{"exactly 366 days counting both ends", "2026-01-01", "2027-01-01", "", 366},
		{"367 days", "2026-01-01", "2027-01-02", "to", 0},
		{"366 days across a leap day", "2024-01-01", "2024-12-31", "", 366},
		{"missing from", "", "2026-03-04", "from", 0},
		{"missing to", "2026-03-04", "", "to", 0},
		{"both missing names from first", "", "", "from", 0},
		{"malformed from", "04.03.2026", "2026-03-04", "from", 0},
		{"single-digit month", "2026-3-04", "2026-03-04", "from", 0},
		{"date with a time", "2026-03-04", "2026-03-04T00:00:00Z", "to", 0},
		{"surrounding spaces", " 2026-03-04", "2026-03-04", "from", 0},
		{"day the month lacks", "2026-02-30", "2026-03-04", "from", 0},
		{"February 29 outside a leap year", "2026-01-01", "2026-02-29", "to", 0},
		{"month 13", "2026-13-01", "2026-03-04", "from", 0},
		{"from after to", "2026-03-05", "2026-03-04", "from", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := domain.ParseRange(tc.from, tc.to)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("ParseRange(%q, %q) = %v, want valid", tc.from, tc.to, err)
				}
				if r.Days() != tc.wantDays {
					t.Fatalf("Days() = %d, want %d", r.Days(), tc.wantDays)
				}
				return
			}
			f, ok := fault.As(err)
			if !ok || f.Kind() != fault.KindInvalid {
				t.Fatalf("ParseRange(%q, %q) = %v, want an Invalid fault on %q", tc.from, tc.to, err, tc.wantField)
			}
			if f.Field() != tc.wantField {
				t.Fatalf("error names %q (%v), want %q", f.Field(), f, tc.wantField)
			}
		})
	}
}

func TestRangeBoundsCoverWholeUTCDays(t *testing.T) {
	r, err := domain.ParseRange("2026-03-04", "2026-03-06")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC); !r.From.Equal(want) {
		t.Fatalf("From = %v, want %v", r.From, want)
	}
	// End is exclusive: the last day is included up to its last instant.
	if want := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC); !r.End().Equal(want) {
		t.Fatalf("End = %v, want %v", r.End(), want)
	}
}

func TestDaysSinceCountsUTCDaysNotHours(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	tests := []struct {
		name    string
		at, now time.Time
		want    int
	}{
		{"same instant", time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC), 0},
		{"same UTC day, hours apart", time.Date(2026, 3, 4, 0, 0, 1, 0, time.UTC), time.Date(2026, 3, 4, 23, 59, 59, 0, time.UTC), 0},
		{"one minute across midnight is a day", time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC), time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), 1},
		{"almost two days is one day", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 5, 23, 59, 0, 0, time.UTC), 1},
		{"across a month end", time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), 2},
		{"across a year", time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC), 365},
		// 00:30 CET is 23:30 UTC of the day before: days are UTC days whatever the zone of the value.
		{"zoned values use their UTC day", time.Date(2026, 3, 5, 0, 30, 0, 0, berlin), time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC), 1},
		{"a sign-in after now counts as today", time.Date(2026, 3, 5, 0, 0, 1, 0, time.UTC), time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := domain.DaysSince(tc.at, tc.now); got != tc.want {
				t.Fatalf("DaysSince(%v, %v) = %d, want %d", tc.at, tc.now, got, tc.want)
			}
		})
	}
}
