package memory

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// userExists reports whether appID has userID. Callers hold mu.
func (s *Store) userExists(appID, userID string) bool {
	u, ok := s.users[userID]
	return ok && u.AppID == appID
}

// CreateAuthCode implements app.AuthCodes.
func (s *Store) CreateAuthCode(_ context.Context, c domain.AuthCode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userExists(c.AppID, c.UserID) {
		return domain.NotFound("user")
	}
	for k, old := range s.codes {
		if old.ExpiresAt.Before(c.CreatedAt) {
			delete(s.codes, k)
		}
	}
	c.Hash = bytes.Clone(c.Hash)
	c.AMR = slices.Clone(c.AMR)
	s.codes[string(c.Hash)] = c
	return nil
}

// ConsumeAuthCode implements app.AuthCodes.
func (s *Store) ConsumeAuthCode(_ context.Context, hash []byte) (domain.AuthCode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.codes[string(hash)]
	if !ok {
		return domain.AuthCode{}, domain.NotFound("authorization code")
	}
	delete(s.codes, string(hash))
	return c, nil
}

func cloneToken(t domain.RefreshToken) domain.RefreshToken {
	t.Hash = bytes.Clone(t.Hash)
	if t.UsedAt != nil {
		at := *t.UsedAt
		t.UsedAt = &at
	}
	return t
}

// CreateRefreshFamily implements app.RefreshTokens.
func (s *Store) CreateRefreshFamily(_ context.Context, f domain.RefreshFamily, first domain.RefreshToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userExists(f.AppID, f.UserID) {
		return domain.NotFound("user")
	}
	first.FamilyID = f.ID
	f.AMR = slices.Clone(f.AMR)
	s.families[f.ID] = f
	s.refresh[string(first.Hash)] = cloneToken(first)
	return nil
}

// GetRefreshToken implements app.RefreshTokens.
func (s *Store) GetRefreshToken(_ context.Context, hash []byte) (domain.RefreshToken, domain.RefreshFamily, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refresh[string(hash)]
	if !ok {
		return domain.RefreshToken{}, domain.RefreshFamily{}, domain.NotFound("refresh token")
	}
	return cloneToken(t), s.families[t.FamilyID], nil
}

// RotateRefreshToken implements app.RefreshTokens.
func (s *Store) RotateRefreshToken(_ context.Context, hash []byte, next domain.RefreshToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refresh[string(hash)]
	if !ok {
		return domain.NotFound("refresh token")
	}
	f := s.families[t.FamilyID]
	if t.UsedAt != nil || f.Revoked {
		return domain.ErrTokenSpent
	}
	at := next.CreatedAt
	t.UsedAt = &at
	s.refresh[string(hash)] = t
	for k, old := range s.refresh {
		if old.FamilyID == f.ID && old.ExpiresAt.Before(next.CreatedAt) {
			delete(s.refresh, k)
		}
	}
	next.FamilyID = f.ID
	s.refresh[string(next.Hash)] = cloneToken(next)
	f.LastUsedAt, f.ExpiresAt = next.CreatedAt, next.ExpiresAt
	s.families[f.ID] = f
	return nil
}

// revokeFamilies revokes the families that match. Callers hold mu.
func (s *Store) revokeFamilies(match func(domain.RefreshFamily) bool) {
	for id, f := range s.families {
		if match(f) {
			f.Revoked = true
			s.families[id] = f
		}
	}
}

// liveFamilies returns the ids of the families that match and are live at now, by user, each list
// sorted. Callers hold mu.
func (s *Store) liveFamilies(now time.Time, match func(domain.RefreshFamily) bool) map[string][]string {
	out := map[string][]string{}
	for _, f := range s.families {
		if match(f) && f.Live(now) {
			out[f.UserID] = append(out[f.UserID], f.ID)
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// RotateAppKey implements app.RefreshTokens: the app, the families and the events change under
// the store's lock, so all of it happens or none.
func (s *Store) RotateAppKey(ctx context.Context, appID string, now time.Time, fn func(*domain.App) ([]events.Event, error), sessionsRevoked func(string, []string) ([]events.Event, error)) (domain.App, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, evs, err := s.changedApp(appID, fn)
	if err != nil {
		return domain.App{}, err
	}
	mine := func(f domain.RefreshFamily) bool { return f.AppID == appID && !f.Revoked }
	live := s.liveFamilies(now, mine)
	for _, userID := range slices.Sorted(maps.Keys(live)) {
		more, err := sessionsRevoked(userID, live[userID])
		if err != nil {
			return domain.App{}, err
		}
		evs = append(slices.Clip(evs), more...)
	}
	s.apps[appID] = cloneApp(next)
	s.revokeFamilies(mine)
	s.outbox.Add(ctx, evs...)
	return next, nil
}

// attempt is one recorded attempt under a key.
type attempt struct {
	id string
	at time.Time
}

// ReserveAttempt implements app.Attempts. Counting and recording happen under the store's lock, so
// concurrent reservations see each other.
func (s *Store) ReserveAttempt(_ context.Context, id string, at time.Time, limits ...app.AttemptLimit) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range limits {
		s.attempts[l.Key] = slices.DeleteFunc(s.attempts[l.Key], func(a attempt) bool { return a.at.Before(l.Since) })
	}
	for i, l := range limits {
		if len(s.attempts[l.Key]) >= l.Max {
			return i, nil
		}
	}
	for _, l := range limits {
		if !l.CheckOnly && !slices.ContainsFunc(s.attempts[l.Key], func(a attempt) bool { return a.id == id }) {
			s.attempts[l.Key] = append(s.attempts[l.Key], attempt{id: id, at: at})
		}
	}
	return -1, nil
}

// ReleaseAttempt implements app.Attempts.
func (s *Store) ReleaseAttempt(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, list := range s.attempts {
		s.attempts[key] = slices.DeleteFunc(list, func(a attempt) bool { return a.id == id })
		if len(s.attempts[key]) == 0 {
			delete(s.attempts, key)
		}
	}
	return nil
}

// ClearAttempts implements app.Attempts.
func (s *Store) ClearAttempts(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.attempts, key)
	return nil
}
