package memory

import (
	"bytes"
	"context"
	"time"

	"github.com/berthhq/berth/services/identity/internal/domain"
)

func cloneReferral(r domain.Referral) domain.Referral {
	r.Hash = bytes.Clone(r.Hash)
	return r
}

// CreateReferral implements app.Referrals.
func (s *Store) CreateReferral(_ context.Context, r domain.Referral, since time.Time, limit int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[r.InviterID]; !ok || u.AppID != r.AppID {
		return domain.NotFound("user")
	}
	n := 0
	for _, other := range s.referrals {
		if other.InviterID == r.InviterID && !other.CreatedAt.Before(since) {
			n++
		}
	}
	if n >= limit {
		return domain.ErrInviteLimit
	}
	s.referrals[string(r.Hash)] = cloneReferral(r)
	return nil
}

// GetReferral implements app.Referrals.
func (s *Store) GetReferral(_ context.Context, hash []byte) (domain.Referral, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.referrals[string(hash)]
	if !ok {
		return domain.Referral{}, domain.NotFound("referral")
	}
	return cloneReferral(r), nil
}

// DeleteReferral implements app.Referrals.
func (s *Store) DeleteReferral(_ context.Context, hash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.referrals, string(hash))
	return nil
}
