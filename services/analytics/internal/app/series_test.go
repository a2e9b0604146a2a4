package app_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// seriesDay is midnight UTC of March d, 2026 (t0 is March 4).
func seriesDay(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

// week is the app's 7-day series ending March 10: March 4 to 10.
func week(t *testing.T, svc *app.Service, appID string) []domain.DailyRow {
	t.Helper()
	s, err := svc.DailySeries(context.Background(), appID, 7, "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	return s.Rows
}

// rowsWith is the 7 zero rows of March 4 to 10 with set applied to the row of each day it names.
func rowsWith(set map[int]func(*domain.DailyRow)) rows {
	rows := domain.NewSeries("", domain.Range{From: seriesDay(4), To: seriesDay(10)}).Rows
	for d, f := range set {
		f(&rows[d-4])
	}
	return rows
}

func TestDailySeriesCountsEachEventOnItsUTCDay(t *testing.T) {
	appID, tenantID, ada, bob := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	berlin := time.FixedZone("CET", 3600)
	paid := func(typ, currency string, amount int64, at time.Time) *billingv1.MoneyChanged {
		m := &billingv1.MoneyChanged{Amount: amount, Currency: currency, UserId: ada, PaymentId: "pay_" + uuid.NewString()}
		if typ == "sub" {
			m.SubscriptionId, m.PaidUntil = "sub_1", at.Add(720*time.Hour).Format(time.RFC3339)
		}
		return m
	}
	tests := []struct {
		name   string
		events func(t *testing.T) []events.Event
		want   rows
	}{
		{"days without events are zero rows", func(*testing.T) []events.Event { return nil }, rowsWith(nil)},
		{"a sign-in counts on its UTC day, whatever the zone it was stamped in", func(t *testing.T) []events.Event {
			return []events.Event{
				signedIn(t, appID, ada, tenantID, seriesDay(5).Add(-time.Second), "Ada"),                        // last second of the 4th
				signedIn(t, appID, ada, tenantID, seriesDay(5), "Ada"),                                          // first of the 5th
				signedIn(t, appID, bob, tenantID, time.Date(2026, 3, 7, 0, 30, 0, 0, berlin), "Bob"),            // 23:30 UTC on the 6th
				signedIn(t, appID, bob, tenantID, seriesDay(11), "Bob"),                                         // after the range
				signedIn(t, uuid.NewString(), bob, tenantID, seriesDay(6).Add(time.Hour), "Bob of another app"), // another app's
			}
		}, rowsWith(map[int]func(*domain.DailyRow){
			4: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 1, 1 },
			5: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 1, 1 },
			6: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 1, 1 },
		})},
		{"active users are the distinct users signing in that day", func(t *testing.T) []events.Event {
			return []events.Event{
				signedIn(t, appID, ada, tenantID, seriesDay(8).Add(time.Hour), "Ada"),
				signedIn(t, appID, ada, tenantID, seriesDay(8).Add(2*time.Hour), "Ada"),
				signedIn(t, appID, bob, tenantID, seriesDay(8).Add(3*time.Hour), "Bob"),
			}
		}, rowsWith(map[int]func(*domain.DailyRow){8: func(r *domain.DailyRow) { r.SignIns, r.ActiveUsers = 3, 2 }})},
		{"new users and tenants count their creation only", func(t *testing.T) []events.Event {
			return []events.Event{
				userChanged(t, identityv1.EventUserCreated, appID, ada, tenantID, seriesDay(4).Add(time.Hour), "Ada"),
				userChanged(t, identityv1.EventUserUpdated, appID, ada, tenantID, seriesDay(5).Add(time.Hour), "Ada L."),
				userChanged(t, identityv1.EventUserCreated, appID, bob, "", seriesDay(5).Add(time.Hour), "Bob"),
				tenantChanged(t, tenantv1.EventTenantCreated, appID, tenantID, seriesDay(4).Add(time.Hour), "Acme"),
				tenantChanged(t, tenantv1.EventTenantUpdated, appID, tenantID, seriesDay(6).Add(time.Hour), "Acme Ltd"),
			}
		}, rowsWith(map[int]func(*domain.DailyRow){
			4: func(r *domain.DailyRow) { r.NewUsers, r.NewTenants = 1, 1 },
			5: func(r *domain.DailyRow) { r.NewUsers = 1 },
		})},
		{"revenue is summed per currency, however the provider spells it", func(t *testing.T) []events.Event {
			at := seriesDay(6).Add(time.Hour)
			return []events.Event{
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 2, at, paid("units", "eur", 500, at)),
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 3, at, paid("units", "EUR", 250, at)),
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 4, at, paid("units", "usd", 300, at)),
				money(t, billingv1.EventSubscriptionStarted, appID, tenantID, 5, at, paid("sub", "eur", 1000, at)),
				money(t, billingv1.EventSubscriptionRenewed, appID, tenantID, 6, seriesDay(7), paid("sub", "chf", 900, seriesDay(7))),
				// payments without a usable amount count no revenue
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 7, seriesDay(7), &billingv1.MoneyChanged{Units: 1}),
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 8, seriesDay(7), paid("units", "", 100, seriesDay(7))),
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 9, seriesDay(7), paid("units", "euro", 100, seriesDay(7))),
				money(t, billingv1.EventPaymentOneTime, appID, tenantID, 10, seriesDay(7), paid("units", "EUR", -100, seriesDay(7))),
			}
		}, rowsWith(map[int]func(*domain.DailyRow){
			6: func(r *domain.DailyRow) {
				r.OneTime = []domain.Money{{Currency: "EUR", Amount: 750}, {Currency: "USD", Amount: 300}}
				r.Recurring = []domain.Money{{Currency: "EUR", Amount: 1000}}
			},
			7: func(r *domain.DailyRow) { r.Recurring = []domain.Money{{Currency: "CHF", Amount: 900}} },
		}).withActive(6, 10, 1)},
		{"a subscription is active from its first payment until the day it ends", func(t *testing.T) []events.Event {
			return []events.Event{
				money(t, billingv1.EventSubscriptionStarted, appID, tenantID, 2, seriesDay(5).Add(time.Hour), paid("sub", "", 0, seriesDay(5))),
				money(t, billingv1.EventSubscriptionCancelled, appID, tenantID, 3, seriesDay(6), &billingv1.MoneyChanged{SubscriptionId: "sub_1"}),
				money(t, billingv1.EventSubscriptionEnded, appID, tenantID, 4, seriesDay(8).Add(time.Hour), &billingv1.MoneyChanged{SubscriptionId: "sub_1"}),
				// a renewal seen before any start: it ran since that renewal at least
				money(t, billingv1.EventSubscriptionRenewed, appID, uuid.NewString(), 2, seriesDay(9), &billingv1.MoneyChanged{SubscriptionId: "sub_2", PaymentId: "in_2"}),
				// an end without a payment seen: analytics never saw it run
				money(t, billingv1.EventSubscriptionEnded, appID, uuid.NewString(), 2, seriesDay(9), &billingv1.MoneyChanged{SubscriptionId: "sub_3"}),
			}
		}, rowsWith(nil).withActive(5, 7, 1).withActive(9, 10, 1)},
		{"payment failures count each failure, frozen tenants each tenant once a day", func(t *testing.T) []events.Event {
			other := uuid.NewString()
			return []events.Event{
				money(t, billingv1.EventPaymentFailed, appID, tenantID, 2, seriesDay(9), &billingv1.MoneyChanged{PaymentFailedCount: 1}),
				money(t, billingv1.EventPaymentFailed, appID, tenantID, 3, seriesDay(9).Add(time.Hour), &billingv1.MoneyChanged{PaymentFailedCount: 2}),
				money(t, billingv1.EventTenantFrozen, appID, tenantID, 4, seriesDay(9).Add(2*time.Hour), &billingv1.MoneyChanged{}),
				money(t, billingv1.EventTenantUnfrozen, appID, tenantID, 5, seriesDay(9).Add(3*time.Hour), &billingv1.MoneyChanged{}),
				money(t, billingv1.EventTenantFrozen, appID, tenantID, 6, seriesDay(9).Add(4*time.Hour), &billingv1.MoneyChanged{}),
				money(t, billingv1.EventTenantFrozen, appID, other, 2, seriesDay(10), &billingv1.MoneyChanged{}),
			}
		}, rowsWith(map[int]func(*domain.DailyRow){
			9:  func(r *domain.DailyRow) { r.PaymentFailures, r.FrozenTenants = 2, 1 },
			10: func(r *domain.DailyRow) { r.FrozenTenants = 1 },
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := service(t, app.Config{Store: memory.New()})
			evs := tc.events(t)
			apply(t, svc, evs...)
			if got := rows(week(t, svc, appID)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("rows\n got %+v\nwant %+v", got, tc.want)
			}
			// Every event delivered again, in reverse order, counts once.
			for i := len(evs) - 1; i >= 0; i-- {
				apply(t, svc, evs[i])
			}
			if got := rows(week(t, svc, appID)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("after a replay\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// rows is a series' rows, to set the active subscriptions of a span of days in the table above.
type rows []domain.DailyRow

func (rs rows) withActive(from, to int, n int64) rows {
	for d := from; d <= to; d++ {
		rs[d-4].ActiveSubscriptions += n
	}
	return rs
}

func TestDailySeriesRefusesARangeItDoesNotOffer(t *testing.T) {
	now := time.Date(2026, 3, 10, 23, 59, 0, 0, time.UTC)
	svc := service(t, app.Config{Store: memory.New(), Clock: func() time.Time { return now }})
	appID := uuid.NewString()
	tests := []struct {
		name      string
		appID     string
		days      int
		end       string
		wantField string
		wantFrom  string
	}{
		{"today's week by default", appID, 7, "", "", "2026-03-04"},
		{"a year ending on a chosen day", appID, 365, "2024-12-31", "", "2024-01-02"},
		{"90 days", appID, 90, "2026-03-10", "", "2025-12-11"},
		{"an app id in capitals names the same app", strings.ToUpper(appID), 7, "", "", "2026-03-04"},
		{"a blank app id", "  ", 7, "", "appId", ""},
		{"a length not offered", appID, 8, "", "days", ""},
		{"no length", appID, 0, "", "days", ""},
		{"an end that is no date", appID, 30, "10.03.2026", "end", ""},
		{"an end the calendar lacks", appID, 30, "2026-02-30", "end", ""},
		{"an app id that is no UUID", "app-1", 7, "", "appId", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := svc.DailySeries(context.Background(), tc.appID, tc.days, tc.end)
			if tc.wantField != "" {
				if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != tc.wantField {
					t.Fatalf("DailySeries = %v, want an Invalid fault on %s", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.AppID != appID || len(s.Rows) != tc.days || s.Range.From.Format(time.DateOnly) != tc.wantFrom || s.Rows[0].Day != s.Range.From || s.Rows[tc.days-1].Day != s.Range.To {
				t.Fatalf("series %s..%s with %d rows, want %d rows from %s", s.Range.From, s.Range.To, len(s.Rows), tc.days, tc.wantFrom)
			}
		})
	}
}
