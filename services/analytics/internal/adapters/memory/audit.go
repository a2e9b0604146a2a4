package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// auditLog is the memory store's audit log. Reset leaves it alone (app.Store).
type auditLog struct {
	entries   map[string]domain.AuditEntry // by id
	retention map[string]int               // days, by app
}

// RecordAuditEntry stores a copy of e unless its id is taken.
func (s *Store) RecordAuditEntry(_ context.Context, e domain.AuditEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.audit.entries[e.ID]; !ok {
		e.ChangedFields = slices.Clone(e.ChangedFields)
		s.audit.entries[e.ID] = e
	}
	return nil
}

// VisitAuditEntries visits copies of the entries f selects, newest first.
func (s *Store) VisitAuditEntries(_ context.Context, f domain.AuditFilter, v app.Visitor[domain.AuditEntry]) error {
	s.mu.Lock()
	var hits []domain.AuditEntry
	for _, e := range s.audit.entries {
		if f.Matches(e) {
			e.ChangedFields = slices.Clone(e.ChangedFields)
			hits = append(hits, e)
		}
	}
	s.mu.Unlock() // the copies are the snapshot: the visitor may be slow (a client reading a stream)
	slices.SortFunc(hits, func(a, b domain.AuditEntry) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if f.Limit > 0 && len(hits) > f.Limit {
		hits = hits[:f.Limit]
	}
	if err := v.Count(len(hits)); err != nil {
		return err
	}
	for _, e := range hits {
		if err := v.Each(e); err != nil {
			return err
		}
	}
	return nil
}

// SetAuditRetention sets the app's retention.
func (s *Store) SetAuditRetention(_ context.Context, appID string, days int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit.retention[appID] = days
	return nil
}

// AuditRetention is the app's retention, the default when unset.
func (s *Store) AuditRetention(_ context.Context, appID string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retentionOf(appID), nil
}

func (s *Store) retentionOf(appID string) int {
	if d, ok := s.audit.retention[appID]; ok {
		return d
	}
	return domain.DefaultAuditRetentionDays
}

// PruneAuditEntries deletes the entries older than their app's retention before now.
func (s *Store) PruneAuditEntries(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, e := range s.audit.entries {
		if e.At.Before(now.AddDate(0, 0, -s.retentionOf(e.AppID))) {
			delete(s.audit.entries, id)
			n++
		}
	}
	return n, nil
}
