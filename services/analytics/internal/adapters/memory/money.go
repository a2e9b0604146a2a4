package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// ApplySubscription applies the change to the stored subscription and records its payment once.
func (s *Store) ApplySubscription(_ context.Context, c domain.SubscriptionChange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{c.State.AppID, c.State.SubscriptionID}
	s.subscriptions[k] = s.subscriptions[k].Apply(c)
	if c.Payment == nil {
		return nil
	}
	if s.payments[k] == nil {
		s.payments[k] = map[string]time.Time{}
	}
	if _, ok := s.payments[k][c.Payment.Key]; !ok {
		s.payments[k][c.Payment.Key] = c.Payment.At
	}
	return nil
}

// RecordOneTimePayment stores p unless its id is taken.
func (s *Store) RecordOneTimePayment(_ context.Context, p domain.OneTimePayment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.oneTime[p.ID]; !ok {
		s.oneTime[p.ID] = p
	}
	return nil
}

// VisitSubscriptions collects route 6's records under the lock, then visits them: the memory store
// is the development default, where lists are small.
func (s *Store) VisitSubscriptions(_ context.Context, appID string, from, to time.Time, v app.Visitor[app.SubscriptionRecord]) error {
	s.mu.Lock()
	type hit struct {
		rec  app.SubscriptionRecord
		last time.Time
	}
	var hits []hit
	for k, sub := range s.subscriptions {
		if k.appID != appID {
			continue
		}
		var last time.Time
		for _, at := range s.payments[k] {
			if !at.Before(from) && at.Before(to) && at.After(last) {
				last = at
			}
		}
		if !last.IsZero() {
			hits = append(hits, hit{app.SubscriptionRecord{Subscription: sub, Payer: s.payer(appID, sub.UserID)}, last})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(hits, func(a, b hit) int {
		if c := b.last.Compare(a.last); c != 0 {
			return c
		}
		return cmp.Compare(b.rec.Subscription.ID, a.rec.Subscription.ID)
	})
	recs := make([]app.SubscriptionRecord, len(hits))
	for i, h := range hits {
		recs[i] = h.rec
	}
	return visitAll(recs, v)
}

// VisitOneTimePayments visits route 7's records.
func (s *Store) VisitOneTimePayments(_ context.Context, appID string, from, to time.Time, v app.Visitor[app.OneTimePaymentRecord]) error {
	s.mu.Lock()
	var recs []app.OneTimePaymentRecord
	for _, p := range s.oneTime {
		if p.AppID == appID && !p.At.Before(from) && p.At.Before(to) {
			recs = append(recs, app.OneTimePaymentRecord{Payment: p, Payer: s.payer(appID, p.UserID)})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(recs, func(a, b app.OneTimePaymentRecord) int {
		if c := b.Payment.At.Compare(a.Payment.At); c != 0 {
			return c
		}
		return cmp.Compare(b.Payment.ID, a.Payment.ID)
	})
	return visitAll(recs, v)
}

// VisitTenants visits route 9's records.
func (s *Store) VisitTenants(_ context.Context, appID string, from, to time.Time, v app.Visitor[app.TenantRecord]) error {
	s.mu.Lock()
	type hit struct {
		rec  app.TenantRecord
		last time.Time
	}
	var hits []hit
	for k, days := range s.tenantDays {
		t, ok := s.tenants[k]
		if k.appID != appID || !ok {
			continue
		}
		var last time.Time
		for day := range days {
			if !day.Before(from) && day.Before(to) && day.After(last) {
				last = day
			}
		}
		if last.IsZero() {
			continue
		}
		t.Tenant = proto.CloneOf(t.Tenant)
		rec := app.TenantRecord{Tenant: t, Users: []app.UserSnapshot{}}
		for uk, u := range s.users {
			if uk.appID == appID && u.TenantRef == k.id && !u.Deleted && u.User != nil {
				rec.Users = append(rec.Users, cloneUser(u))
			}
		}
		slices.SortFunc(rec.Users, func(a, b app.UserSnapshot) int { return cmp.Compare(a.UserID, b.UserID) })
		hits = append(hits, hit{rec, last})
	}
	s.mu.Unlock()
	slices.SortFunc(hits, func(a, b hit) int {
		if c := b.last.Compare(a.last); c != 0 {
			return c
		}
		return cmp.Compare(b.rec.Tenant.TenantID, a.rec.Tenant.TenantID)
	})
	recs := make([]app.TenantRecord, len(hits))
	for i, h := range hits {
		recs[i] = h.rec
	}
	return visitAll(recs, v)
}

// visitAll hands v the records, stopping at its first error.
func visitAll[T any](recs []T, v app.Visitor[T]) error {
	if err := v.Count(len(recs)); err != nil {
		return err
	}
	for _, r := range recs {
		if err := v.Each(r); err != nil {
			return err
		}
	}
	return nil
}
