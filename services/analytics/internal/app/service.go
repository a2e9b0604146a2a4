package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// Service answers the analytics lists.
type Service struct {
	store Store
	clock func() time.Time
}

// NewService returns a Service reading store; clock is time.Now when nil.
func NewService(store Store, clock func() time.Time) *Service {
	if clock == nil {
		clock = time.Now
	}
	return &Service{store: store, clock: clock}
}

// SignInItem is a sign-in as route 8 lists it.
type SignInItem struct {
	SignInRecord
	DaysSince int // whole UTC days from the sign-in to the request
}

// ListSignIns is route 8: the app's sign-ins on the UTC days from..to (both included), newest
// first. The range is validated before anything is read.
func (s *Service) ListSignIns(ctx context.Context, appID, from, to string) ([]SignInItem, error) {
	r, err := domain.ParseRange(from, to)
	if err != nil {
		return nil, err
	}
	app, err := uuid.Parse(appID)
	if err != nil {
		// Authentication always yields a UUID; anything else has no sign-ins.
		return []SignInItem{}, nil
	}
	records, err := s.store.ListSignIns(ctx, app.String(), r.From, r.End())
	if err != nil {
		return nil, err
	}
	now := s.clock()
	items := make([]SignInItem, len(records))
	for i, rec := range records {
		items[i] = SignInItem{SignInRecord: rec, DaysSince: domain.DaysSince(rec.SignIn.At, now)}
	}
	return items, nil
}
