package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"time"
)

// MaxRangeDays is the longest range a list may cover, counting both ends.
const MaxRangeDays = 366

const day = 24 * time.Hour

// Range is an inclusive range of whole UTC days.
type Range struct {
	From time.Time // midnight UTC of the first day
	To   time.Time // midnight UTC of the last day
}

// ParseRange validates the from/to parameters of an analytics list: both required YYYY-MM-DD dates
// that exist in the calendar, from no later than to, and at most MaxRangeDays days counting both
// ends. The error names the parameter to fix.
func ParseRange(from, to string) (Range, error) {
	f, err := parseDay("from", from)
	if err != nil {
		return Range{}, err
	}
	t, err := parseDay("to", to)
	if err != nil {
		return Range{}, err
	}
	if f.After(t) {
		return Range{}, fault.InvalidField("from", "must not be after to")
	}
	r := Range{From: f, To: t}
	if r.Days() > MaxRangeDays {
		return Range{}, fault.InvalidField("to", "must be at most %d days from from, counting both", MaxRangeDays)
	}
	return r, nil
}

// parseDay reads one YYYY-MM-DD date. time.Parse refuses days a month does not have (2026-02-30)
// and any other spelling (2026-2-3, a time of day, surrounding spaces).
func parseDay(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fault.InvalidField(field, "is required")
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fault.InvalidField(field, "must be a date YYYY-MM-DD")
	}
	return d, nil
}

// Days is how many days the range covers, both ends included.
func (r Range) Days() int { return int(r.To.Sub(r.From)/day) + 1 }

// End is the first instant after the range: midnight UTC after its last day.
func (r Range) End() time.Time { return r.To.Add(day) }

// DaysSince is the number of whole days from the UTC day of at to the UTC day of now: 0 on the same
// day, 1 on the next, whatever the times of day. A sign-in stamped after now (clocks of two services
// disagree) counts as today rather than as a negative age.
func DaysSince(at, now time.Time) int {
	n := int(utcDay(now).Sub(utcDay(at)) / day)
	return max(n, 0)
}

func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
