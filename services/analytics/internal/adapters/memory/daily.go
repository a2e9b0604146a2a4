package memory

import (
	"context"
	"time"

	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// factKey is what a daily fact is stored once under.
type factKey struct {
	appID string
	kind  domain.FactKind
	key   string
}

// RecordFact stores f once per key; again, the stored fact keeps the earlier day.
func (s *Store) RecordFact(_ context.Context, f domain.Fact) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := factKey{f.AppID, f.Kind, f.Key}
	stored, ok := s.facts[k]
	if !ok {
		s.facts[k] = f
		return nil
	}
	if f.Day.Before(stored.Day) {
		stored.Day = f.Day
		s.facts[k] = stored
	}
	return nil
}

// DailySeries sums the app's sign-ins and facts per day under the lock.
func (s *Store) DailySeries(_ context.Context, appID string, r domain.Range) (*domain.Series, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	series := domain.NewSeries(appID, r)
	// dayOnce counts a user (active users) or a tenant (frozen tenants) once per day.
	type dayOnce struct {
		day time.Time
		id  string
	}
	active := map[dayOnce]bool{}
	for _, in := range s.signIns {
		row := series.Row(in.At)
		if in.AppID != appID || row == nil {
			continue
		}
		row.SignIns++
		if du := (dayOnce{row.Day, in.UserID}); !active[du] {
			active[du] = true
			row.ActiveUsers++
		}
	}
	frozen := map[dayOnce]bool{}
	runs := map[string]*domain.Span{}
	span := func(key string) *domain.Span {
		if runs[key] == nil {
			runs[key] = &domain.Span{}
		}
		return runs[key]
	}
	for k, f := range s.facts {
		if k.appID != appID {
			continue
		}
		switch f.Kind {
		case domain.FactSubscriptionRun:
			span(f.Key).Start = f.Day
			continue
		case domain.FactSubscriptionEnd:
			span(f.Key).End = f.Day
			continue
		}
		row := series.Row(f.Day)
		if row == nil {
			continue
		}
		if f.Kind == domain.FactTenantFrozen {
			du := dayOnce{row.Day, f.Subject}
			if frozen[du] {
				continue
			}
			frozen[du] = true
		}
		row.Add(f.Kind, f.Currency, 1, f.Amount)
	}
	spans := make([]domain.Span, 0, len(runs))
	for _, sp := range runs {
		if !sp.Start.IsZero() { // an end without a payment seen: analytics never saw it run
			spans = append(spans, *sp)
		}
	}
	series.CountActive(spans)
	return series, nil
}
