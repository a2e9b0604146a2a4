package domain

import (
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// SeriesLengths are the ranges, in days, the daily series offers.
var SeriesLengths = []int{7, 30, 90, 365}

// ParseSeriesRange validates the range of a daily series: days one of SeriesLengths, ending on the
// UTC day end (YYYY-MM-DD), or on today's UTC day at now when end is "". Both ends are included.
func ParseSeriesRange(days int, end string, now time.Time) (Range, error) {
	if !slices.Contains(SeriesLengths, days) {
		return Range{}, fault.InvalidField("days", "must be 7, 30, 90 or 365")
	}
	last := utcDay(now)
	if end != "" {
		var err error
		if last, err = parseDay("end", end); err != nil {
			return Range{}, err
		}
	}
	return Range{From: last.AddDate(0, 0, 1-days), To: last}, nil
}

// FactKind names what a daily fact counts. Each kind's key says what is counted once: replaying
// an event records a fact under the same key, which changes nothing.
type FactKind string

// The daily facts the projection records.
const (
	FactNewUser         FactKind = "new_user"             // a user's creation; key: the user id
	FactNewTenant       FactKind = "new_tenant"           // a tenant's creation; key: the tenant id
	FactPaymentFailure  FactKind = "payment_failure"      // key: the billing.payment.failed event id
	FactTenantFrozen    FactKind = "tenant_frozen"        // key: the billing.tenant.frozen event id; subject: the tenant
	FactRecurring       FactKind = "recurring_revenue"    // a subscription payment; key: its payment key
	FactOneTime         FactKind = "one_time_revenue"     // key: the billing.payment.one_time event id
	FactSubscriptionRun FactKind = "subscription_started" // key: the subscription's item id; day: its first payment seen
	FactSubscriptionEnd FactKind = "subscription_ended"   // key: the subscription's item id; day: its end
)

// Fact is one thing that happened to an app on a UTC day, counted in its daily series. Facts are
// stored once per (AppID, Kind, Key); a fact recorded again under a stored key moves the stored
// day to the earlier of the two and changes nothing else, so the order events arrive in does not
// matter (a subscription runs from its earliest payment seen).
type Fact struct {
	AppID    string
	Kind     FactKind
	Key      string
	Subject  string    // what a day counts once (the frozen tenant); "" for kinds that count every fact
	Day      time.Time // midnight UTC
	Currency string    // upper-case ISO 4217, revenue kinds only ("" when the payment named none)
	Amount   int64     // minor units of Currency, revenue kinds only
}

// Currency is the ISO 4217 code as the daily series keep it: upper case, as providers' lower-case
// spellings ("eur") and catalog prices ("EUR") name the same currency.
func Currency(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// Money is an amount in minor units of one currency.
type Money struct {
	Currency string
	Amount   int64
}

// DailyRow is an app's figures of one UTC day.
type DailyRow struct {
	Day                 time.Time // midnight UTC
	SignIns             int64     // sign-ins that day
	ActiveUsers         int64     // distinct users signing in that day
	NewUsers            int64
	NewTenants          int64
	ActiveSubscriptions int64 // subscriptions started on or before the day and not ended by it
	Recurring           []Money
	OneTime             []Money
	PaymentFailures     int64
	FrozenTenants       int64 // distinct tenants frozen that day
}

// Add adds to the row count facts of kind, or their amount in currency for the revenue kinds.
// The subscription kinds are not a day's count: CountActive reads them as spans.
func (r *DailyRow) Add(kind FactKind, currency string, count, amount int64) {
	switch kind {
	case FactNewUser:
		r.NewUsers += count
	case FactNewTenant:
		r.NewTenants += count
	case FactPaymentFailure:
		r.PaymentFailures += count
	case FactTenantFrozen:
		r.FrozenTenants += count
	case FactRecurring:
		r.Recurring = AddMoney(r.Recurring, currency, amount)
	case FactOneTime:
		r.OneTime = AddMoney(r.OneTime, currency, amount)
	}
}

// Series is one row per day of a range, oldest first, with zero rows for days without facts.
type Series struct {
	AppID string
	Range Range
	Rows  []DailyRow
}

// NewSeries returns the app's zero rows of the range.
func NewSeries(appID string, r Range) *Series {
	rows := make([]DailyRow, r.Days())
	for i := range rows {
		rows[i].Day = r.From.AddDate(0, 0, i)
	}
	return &Series{AppID: appID, Range: r, Rows: rows}
}

// Row is the row of the UTC day holding day, nil when the range does not cover it.
func (s *Series) Row(day time.Time) *DailyRow {
	i := s.index(day)
	if i < 0 || i >= len(s.Rows) {
		return nil
	}
	return &s.Rows[i]
}

// AddMoney adds amount in currency to the list, kept in currency order.
func AddMoney(list []Money, currency string, amount int64) []Money {
	i, found := slices.BinarySearchFunc(list, currency, func(m Money, c string) int { return strings.Compare(m.Currency, c) })
	if found {
		list[i].Amount += amount
		return list
	}
	return slices.Insert(list, i, Money{Currency: currency, Amount: amount})
}

// Span is the days a subscription runs: from Start (its earliest payment seen) up to, not
// including, End (the day it ended; zero while it runs).
type Span struct {
	Start, End time.Time
}

// CountActive sets each row's ActiveSubscriptions to the number of spans running on its day.
func (s *Series) CountActive(spans []Span) {
	delta := make([]int64, len(s.Rows)+1)
	for _, sp := range spans {
		first := max(s.index(sp.Start), 0)
		end := len(s.Rows)
		if !sp.End.IsZero() {
			end = min(s.index(sp.End), len(s.Rows))
		}
		if first >= end {
			continue
		}
		delta[first]++
		delta[end]--
	}
	s.accumulateActive(0, delta)
}

// ActiveChange is the number of subscriptions starting less those ending on a day.
type ActiveChange struct {
	Day    time.Time
	Change int64
}

// CountActiveChanges sets each row's ActiveSubscriptions to before, the number active on the day
// before the range, plus the changes up to its day; changes outside the range are ignored.
func (s *Series) CountActiveChanges(before int64, changes []ActiveChange) {
	delta := make([]int64, len(s.Rows))
	for _, c := range changes {
		if i := s.index(c.Day); i >= 0 && i < len(delta) {
			delta[i] += c.Change
		}
	}
	s.accumulateActive(before, delta)
}

// accumulateActive sets each row's ActiveSubscriptions to running plus the deltas up to its index.
func (s *Series) accumulateActive(running int64, delta []int64) {
	for i := range s.Rows {
		running += delta[i]
		s.Rows[i].ActiveSubscriptions = running
	}
}

// index is the row index of the UTC day holding t; negative before the range, len(Rows) or more
// after it.
func (s *Series) index(t time.Time) int {
	return int(utcDay(t).Sub(s.Range.From) / day)
}

// ValidCurrency reports whether c is three upper-case ASCII letters, the shape of an ISO 4217
// code (the list of codes itself is the providers' to keep).
func ValidCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}
