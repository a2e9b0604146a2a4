package domain

import (
	"strconv"
	"strings"
	"time"
)

// chargeDateSlack is how far a recurring payment's creation may lie before the UTC midnight of
// its charge date and still belong to it: a provider may stamp a payment in its own time zone,
// a few hours earlier than the date it charges for.
const chargeDateSlack = 12 * time.Hour

// RecurringPeriodEnd is the end of the period a subscription's recurring payment pays for. A
// subscription started on start (its first charge date) is charged on start + k intervals
// (k = 0, 1, …), counted from start as the provider counts (started on the 31st, it is charged
// on the 30th of April and again on the 31st of May), and each charge pays until the next charge
// date. A payment created at createdAt belongs to the latest charge date not after createdAt +
// chargeDateSlack; one created before start is the first charge. ok is false for an interval
// that is not a catalog interval, or a payment dated centuries after start.
func RecurringPeriodEnd(start time.Time, interval string, createdAt time.Time) (time.Time, bool) {
	longest, ok := longestInterval(interval)
	if !ok || createdAt.After(start.AddDate(200, 0, 0)) {
		return time.Time{}, false
	}
	at := createdAt.Add(chargeDateSlack)
	// No interval is longer than longest, so the k-th charge date is at most k × longest after
	// start: begin just below the answer and step to it.
	k := 0
	if elapsed := at.Sub(start); elapsed > 0 {
		k = max(0, int(elapsed/longest)-1)
	}
	for {
		end, _ := addIntervals(start, interval, k+1)
		if end.After(at) {
			return end, true
		}
		k++
	}
}

// longestInterval is the longest time one catalog interval can take (a month is at most 31 days).
func longestInterval(interval string) (time.Duration, bool) {
	m := intervalPattern.FindStringSubmatch(interval)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	days := map[string]int{"day": 1, "week": 7, "month": 31}[strings.TrimSuffix(m[2], "s")]
	return time.Duration(n*days) * 24 * time.Hour, true
}
