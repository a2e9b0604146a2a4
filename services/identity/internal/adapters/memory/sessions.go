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
	live := s.liveFamilies(now, mine)[userID]
	if live == nil {
		live = []string{}
	}
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

// UpdateUserEndingSessions implements app.Sessions: the user, the families and the events change
// under the store's lock, so all of it happens or none.
func (s *Store) UpdateUserEndingSessions(ctx context.Context, appID, userID string, now time.Time, fn func(*domain.User) ([]events.Event, error), sessionsRevoked func([]string) ([]events.Event, error)) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, evs, err := s.changedUser(appID, userID, fn)
	if err != nil {
		return domain.User{}, err
	}
	more, err := s.sessionsEnding(appID, userID, now, sessionsRevoked)
	if err != nil {
		return domain.User{}, err
	}
	s.users[userID] = cloneUser(next)
	s.revokeFamilies(s.userFamilies(appID, userID))
	s.outbox.Add(ctx, append(slices.Clip(evs), more...)...)
	return next, nil
}

// userFamilies matches the families of one user that are not revoked yet.
func (s *Store) userFamilies(appID, userID string) func(domain.RefreshFamily) bool {
	return func(f domain.RefreshFamily) bool { return f.AppID == appID && f.UserID == userID && !f.Revoked }
}

// sessionsEnding makes the events of revoking every session of the user at now: those of
// sessionsRevoked for the live ones, none when none is live (or sessionsRevoked is nil). Callers
// hold mu and revoke the families once every other step of their change has succeeded.
func (s *Store) sessionsEnding(appID, userID string, now time.Time, sessionsRevoked func([]string) ([]events.Event, error)) ([]events.Event, error) {
	live := s.liveFamilies(now, s.userFamilies(appID, userID))[userID]
	if len(live) == 0 || sessionsRevoked == nil {
		return nil, nil
	}
	return sessionsRevoked(live)
}
