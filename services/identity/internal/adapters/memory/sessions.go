package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// ListSessions implements app.Sessions.
func (s *Store) ListSessions(_ context.Context, appID, userID string, now time.Time, limit int) ([]domain.RefreshFamily, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.RefreshFamily{}
	for _, f := range s.families {
		if f.AppID == appID && f.UserID == userID && f.Live(now) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b domain.RefreshFamily) int {
		return cmp.Or(b.LastUsedAt.Compare(a.LastUsedAt), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(len(out), max(limit, 0))], nil
}

// RevokeSessions implements app.Sessions: the families change and the events are added under the
// store's lock, so both happen or neither.
func (s *Store) RevokeSessions(ctx context.Context, appID, userID, sessionID string, now time.Time, fn func(revoked []string) ([]events.Event, error)) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := func(f domain.RefreshFamily) bool {
		return f.AppID == appID && f.UserID == userID && !f.Revoked && (sessionID == "" || f.ID == sessionID)
	}
	if sessionID != "" {
		if f, ok := s.families[sessionID]; !ok || !mine(f) || !f.Live(now) {
			return nil, domain.NotFound("session")
		}
	}
	live := []string{}
	for _, f := range s.families {
		if mine(f) && f.Live(now) {
			live = append(live, f.ID)
		}
	}
	slices.Sort(live)
	if len(live) > 0 {
		evs, err := fn(live)
		if err != nil {
			return nil, err
		}
		s.outbox.Add(ctx, evs...)
	}
	s.revokeFamilies(mine)
	return live, nil
}
