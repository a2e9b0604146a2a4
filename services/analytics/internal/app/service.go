package app

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// Config holds what the use cases depend on.
type Config struct {
	// Store keeps the read models the events build and the lists read; required.
	Store Store
	// Events is the event log a rebuild replays; nil makes Rebuild fail.
	Events EventLog
	// Clock ages the listed sign-ins; time.Now when nil.
	Clock func() time.Time
}

// Service runs the analytics use cases: it applies other contexts' events to the read models
// (Apply), rebuilds them from the event log (Rebuild) and answers the lists of routes 6 to 9. It
// is safe for concurrent use.
type Service struct {
	store  Store
	events EventLog
	clock  func() time.Time
}

// New checks the configuration and returns the use cases.
func New(c Config) (*Service, error) {
	if c.Store == nil {
		return nil, errors.New("analytics: store is required")
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Service{store: c.Store, events: c.Events, clock: clock}, nil
}

// SignInItem is a sign-in as route 8 lists it.
type SignInItem struct {
	SignInRecord
	DaysSince int // whole UTC days from the sign-in to the request
}

// ListSignIns is route 8: the app's sign-ins on the UTC days from..to (both included), newest
// first. The range is validated before anything is read.
func (s *Service) ListSignIns(ctx context.Context, appID, from, to string) ([]SignInItem, error) {
	app, r, err := appRange(appID, from, to)
	if err != nil || app == "" {
		return []SignInItem{}, err
	}
	records, err := s.store.ListSignIns(ctx, app, r.From, r.End())
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

// ListSubscriptions is route 6: the app's subscriptions with a payment (the first or a renewal)
// on the UTC days from..to, both included, visited from one snapshot of the store.
func (s *Service) ListSubscriptions(ctx context.Context, appID, from, to string, v Visitor[SubscriptionRecord]) error {
	return visitRange(ctx, appID, from, to, v, s.store.VisitSubscriptions)
}

// ListOneTimePayments is route 7: the app's one-time payments made on the UTC days from..to.
func (s *Service) ListOneTimePayments(ctx context.Context, appID, from, to string, v Visitor[OneTimePaymentRecord]) error {
	return visitRange(ctx, appID, from, to, v, s.store.VisitOneTimePayments)
}

// ListTenants is route 9: the app's tenants created or changed on the UTC days from..to.
func (s *Service) ListTenants(ctx context.Context, appID, from, to string, v Visitor[TenantRecord]) error {
	return visitRange(ctx, appID, from, to, v, s.store.VisitTenants)
}

// visitRange validates the range before anything is read, then visits the store's list.
func visitRange[T any](ctx context.Context, appID, from, to string, v Visitor[T],
	visit func(context.Context, string, time.Time, time.Time, Visitor[T]) error) error {
	app, r, err := appRange(appID, from, to)
	if err != nil {
		return err
	}
	if app == "" {
		return v.Count(0)
	}
	return visit(ctx, app, r.From, r.End(), v)
}

// appRange validates the range and canonicalises the caller's app id. Authentication always
// yields a UUID; anything else has no records ("" without an error).
func appRange(appID, from, to string) (string, domain.Range, error) {
	r, err := domain.ParseRange(from, to)
	if err != nil {
		return "", domain.Range{}, err
	}
	app, err := uuid.Parse(appID)
	if err != nil {
		return "", r, nil
	}
	return app.String(), r, nil
}

// DailySeries answers the app's figures per UTC day over the days (7, 30, 90 or 365) ending on end
// (YYYY-MM-DD; today in UTC when ""), one row per day, zero rows included. An app analytics has
// seen no event of answers zero rows.
func (s *Service) DailySeries(ctx context.Context, appID string, days int, end string) (*domain.Series, error) {
	app, err := uuid.Parse(appID)
	if err != nil {
		return nil, fault.InvalidField("appId", "must be a UUID")
	}
	r, err := domain.ParseSeriesRange(days, end, s.clock())
	if err != nil {
		return nil, err
	}
	return s.store.DailySeries(ctx, app.String(), r)
}
