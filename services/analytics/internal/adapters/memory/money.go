package memory

import (
	"cmp"
	"context"
	"iter"
	"maps"
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
	var hits []hit[app.SubscriptionRecord]
	for k, sub := range s.subscriptions {
		if k.appID != appID {
			continue
		}
		if last := latestIn(maps.Values(s.payments[k]), from, to); !last.IsZero() {
			hits = append(hits, hit[app.SubscriptionRecord]{app.SubscriptionRecord{Subscription: sub, Payer: s.payer(appID, sub.UserID)}, last, sub.ID})
		}
	}
	s.mu.Unlock()
	recs := newestFirst(hits)
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
	var hits []hit[app.TenantRecord]
	for k, days := range s.tenantDays {
		t, ok := s.tenants[k]
		if k.appID != appID || !ok {
			continue
		}
		last := latestIn(maps.Keys(days), from, to)
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
		hits = append(hits, hit[app.TenantRecord]{rec, last, k.id})
	}
	s.mu.Unlock()
	recs := newestFirst(hits)
	return visitAll(recs, v)
}

// hit is a record of a list with the latest time that put it in the range and its id.
type hit[T any] struct {
	rec  T
	last time.Time
	id   string
}

// latestIn is the latest of times within [from, to), zero when none is.
func latestIn(times iter.Seq[time.Time], from, to time.Time) time.Time {
	var last time.Time
	for at := range times {
		if !at.Before(from) && at.Before(to) && at.After(last) {
			last = at
		}
	}
	return last
}

// newestFirst orders hits by their latest time, newest first, ties by id descending, as the
// Postgres store's lists are ordered, and returns their records.
func newestFirst[T any](hits []hit[T]) []T {
	slices.SortFunc(hits, func(a, b hit[T]) int {
		if c := b.last.Compare(a.last); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id)
	})
	recs := make([]T, len(hits))
	for i, h := range hits {
		recs[i] = h.rec
	}
	return recs
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
