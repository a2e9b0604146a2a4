package convert

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

func TestADailySeriesRendersEveryFigureOfEveryDay(t *testing.T) {
	s := domain.NewSeries("app-1", domain.Range{From: time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	s.Rows[1] = domain.DailyRow{Day: s.Rows[1].Day, SignIns: 1, ActiveUsers: 2, NewUsers: 3, NewTenants: 4, ActiveSubscriptions: 5,
		Recurring: []domain.Money{{Currency: "EUR", Amount: 6}}, OneTime: []domain.Money{{Currency: "CHF", Amount: 7}, {Currency: "USD", Amount: 8}},
		PaymentFailures: 9, FrozenTenants: 10}
	want := &analyticsv1.DailySeries{AppId: "app-1", From: "2026-02-28", To: "2026-03-01", Rows: []*analyticsv1.DailyRow{
		{Day: "2026-02-28", RecurringRevenue: []*analyticsv1.CurrencyAmount{}, OneTimeRevenue: []*analyticsv1.CurrencyAmount{}},
		{Day: "2026-03-01", SignIns: 1, ActiveUsers: 2, NewUsers: 3, NewTenants: 4, ActiveSubscriptions: 5,
			RecurringRevenue: []*analyticsv1.CurrencyAmount{{Currency: "EUR", Amount: 6}},
			OneTimeRevenue:   []*analyticsv1.CurrencyAmount{{Currency: "CHF", Amount: 7}, {Currency: "USD", Amount: 8}},
			PaymentFailures:  9, FrozenTenants: 10},
	}}
	if got := DailySeries(s); !proto.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}
