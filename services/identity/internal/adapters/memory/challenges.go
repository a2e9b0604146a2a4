package memory

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func cloneChallenge(c domain.Challenge) domain.Challenge {
	c.LinkHash = bytes.Clone(c.LinkHash)
	c.CodeHash = bytes.Clone(c.CodeHash)
	c.Methods = slices.Clone(c.Methods)
	if c.UsedAt != nil {
		at := *c.UsedAt
		c.UsedAt = &at
	}
	return c
}

// CreateChallenge implements app.Challenges.
func (s *Store) CreateChallenge(_ context.Context, c domain.Challenge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userExists(c.AppID, c.UserID) {
		return domain.NotFound("user")
	}
	for id, old := range s.challenges {
		switch {
		case old.ExpiresAt.Before(c.CreatedAt):
			delete(s.challenges, id)
		case old.AppID == c.AppID && old.UserID == c.UserID && old.Purpose == c.Purpose && old.UsedAt == nil:
			at := c.CreatedAt
			old.UsedAt = &at
			s.challenges[id] = old
		}
	}
	s.challenges[c.ID] = cloneChallenge(c)
	return nil
}

// GetChallengeByLink implements app.Challenges.
func (s *Store) GetChallengeByLink(_ context.Context, linkHash []byte) (domain.Challenge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.challenges {
		if bytes.Equal(c.LinkHash, linkHash) {
			return cloneChallenge(c), nil
		}
	}
	return domain.Challenge{}, domain.NotFound("challenge")
}

// GetChallenge implements app.Challenges.
func (s *Store) GetChallenge(_ context.Context, appID, id string) (domain.Challenge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.challenges[id]
	if !ok || c.AppID != appID {
		return domain.Challenge{}, domain.NotFound("challenge")
	}
	return cloneChallenge(c), nil
}

// RecordWrongCode implements app.Challenges.
func (s *Store) RecordWrongCode(_ context.Context, appID, id string, now time.Time) (domain.Challenge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.challenges[id]
	if !ok || c.AppID != appID {
		return domain.Challenge{}, domain.NotFound("challenge")
	}
	if !c.Live(now) {
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	c.CodeAttempts++
	s.challenges[id] = c
	return cloneChallenge(c), nil
}

// MeetChallenge implements app.Challenges.
func (s *Store) MeetChallenge(ctx context.Context, appID, id string, now time.Time, fn func(domain.Challenge, *domain.User) (app.ChallengeEffect, error)) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.challenges[id]
	if !ok || c.AppID != appID {
		return domain.User{}, domain.NotFound("challenge")
	}
	if !c.Live(now) {
		return domain.User{}, domain.ErrChallengeSpent
	}
	cur, ok := s.users[c.UserID]
	if !ok || cur.AppID != appID {
		return domain.User{}, domain.NotFound("user")
	}
	next := cloneUser(cur)
	effect, err := fn(cloneChallenge(c), &next)
	if err != nil {
		return domain.User{}, err
	}
	next.ID, next.AppID = cur.ID, cur.AppID // fn cannot move the user to another row or app
	if !next.Deleted && s.emailUsed(appID, next.Email, next.ID) {
		return domain.User{}, domain.ErrEmailTaken
	}
	evs := effect.Events
	if effect.RevokeSessions {
		more, err := s.sessionsEnding(appID, next.ID, now, effect.SessionsRevoked)
		if err != nil {
			return domain.User{}, err
		}
		evs = append(slices.Clip(evs), more...)
	}
	used := now
	c.UsedAt = &used
	s.challenges[id] = c
	s.users[next.ID] = cloneUser(next)
	if effect.RevokeSessions {
		s.revokeFamilies(s.userFamilies(appID, next.ID))
	}
	s.outbox.Add(ctx, evs...)
	return next, nil
}
