package domain

import (
	"testing"
	"time"
)

func TestARecurringPaymentPaysUntilTheSubscriptionsNextChargeDate(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	at := func(y int, m time.Month, d, h, minute int) time.Time {
		return time.Date(y, m, d, h, minute, 0, 0, time.UTC)
	}
	for _, c := range []struct {
		name      string
		start     time.Time
		interval  string
		createdAt time.Time
		want      time.Time
	}{
		{"the first charge pays one interval", day(2026, 3, 10), "1 month", day(2026, 3, 10), day(2026, 4, 10)},
		{"a later charge pays until the next", day(2026, 3, 10), "1 month", day(2026, 7, 10), day(2026, 8, 10)},
		{"a charge made later on its date is still its date's", day(2026, 3, 10), "1 month", at(2026, 5, 10, 23, 59), day(2026, 6, 10)},
		{"a charge stamped hours before its date in the provider's zone is its date's", day(2026, 3, 10), "1 month", at(2026, 5, 9, 22, 0), day(2026, 6, 10)},
		{"months count from the start, not from the last charge", day(2026, 1, 31), "1 month", day(2026, 2, 28), day(2026, 3, 31)},
		{"a start on the 31st is charged on a short month's last day", day(2026, 1, 31), "1 month", day(2026, 3, 31), day(2026, 4, 30)},
		{"several months", day(2026, 1, 15), "3 months", day(2026, 4, 15), day(2026, 7, 15)},
		{"days", day(2026, 1, 1), "14 days", day(2026, 1, 29), day(2026, 2, 12)},
		{"weeks", day(2026, 1, 1), "2 weeks", day(2026, 1, 15), day(2026, 1, 29)},
		{"years of monthly charges", day(2026, 1, 31), "1 month", day(2036, 2, 29), day(2036, 3, 31)},
		{"a payment dated before the start is the first charge", day(2026, 3, 10), "1 month", day(2026, 3, 1), day(2026, 4, 10)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := RecurringPeriodEnd(c.start, c.interval, c.createdAt)
			if !ok || !got.Equal(c.want) {
				t.Fatalf("RecurringPeriodEnd = %v, %v; want %v", got, ok, c.want)
			}
		})
	}
	for _, interval := range []string{"", "1 year", "monthly", "0 months"} {
		if _, ok := RecurringPeriodEnd(day(2026, 1, 1), interval, day(2026, 2, 1)); ok {
			t.Errorf("interval %q is not refused", interval)
		}
	}
	if _, ok := RecurringPeriodEnd(day(2026, 1, 1), "1 day", day(2400, 1, 1)); ok {
		t.Error("a payment dated centuries after the start is not refused")
	}
}
