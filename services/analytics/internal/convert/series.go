package convert

import (
	"time"

	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// DailySeries renders an app's daily series.
func DailySeries(s *domain.Series) *analyticsv1.DailySeries {
	out := &analyticsv1.DailySeries{
		AppId: s.AppID, From: s.Range.From.Format(time.DateOnly), To: s.Range.To.Format(time.DateOnly),
		Rows: make([]*analyticsv1.DailyRow, len(s.Rows)),
	}
	for i, r := range s.Rows {
		out.Rows[i] = &analyticsv1.DailyRow{
			Day: r.Day.Format(time.DateOnly), SignIns: r.SignIns, ActiveUsers: r.ActiveUsers, NewUsers: r.NewUsers,
			NewTenants: r.NewTenants, ActiveSubscriptions: r.ActiveSubscriptions, RecurringRevenue: amounts(r.Recurring),
			OneTimeRevenue: amounts(r.OneTime), PaymentFailures: r.PaymentFailures, FrozenTenants: r.FrozenTenants,
		}
	}
	return out
}

func amounts(ms []domain.Money) []*analyticsv1.CurrencyAmount {
	out := make([]*analyticsv1.CurrencyAmount, len(ms))
	for i, m := range ms {
		out[i] = &analyticsv1.CurrencyAmount{Currency: m.Currency, Amount: m.Amount}
	}
	return out
}
