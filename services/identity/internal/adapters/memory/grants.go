package memory

import (
	"bytes"
	"context"
	"slices"
	"time"

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
		f.Revoked = true
		s.families[f.ID] = f
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

// RevokeRefreshFamily implements app.RefreshTokens.
func (s *Store) RevokeRefreshFamily(_ context.Context, familyID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revokeFamilies(func(f domain.RefreshFamily) bool { return f.ID == familyID })
	return nil
}

// RevokeUserRefreshTokens implements app.RefreshTokens.
func (s *Store) RevokeUserRefreshTokens(_ context.Context, appID, userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revokeFamilies(func(f domain.RefreshFamily) bool { return f.AppID == appID && f.UserID == userID })
	return nil
}

// RevokeAppRefreshTokens implements app.RefreshTokens.
func (s *Store) RevokeAppRefreshTokens(_ context.Context, appID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revokeFamilies(func(f domain.RefreshFamily) bool { return f.AppID == appID })
	return nil
}

// CountLoginFailures implements app.LoginFailures.
func (s *Store) CountLoginFailures(_ context.Context, key string, since time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, at := range s.failures[key] {
		if !at.Before(since) {
			n++
		}
	}
	return n, nil
}

// RecordLoginFailure implements app.LoginFailures.
func (s *Store) RecordLoginFailure(_ context.Context, at, forgetBefore time.Time, keys ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range keys {
		kept := slices.DeleteFunc(s.failures[key], func(t time.Time) bool { return t.Before(forgetBefore) })
		s.failures[key] = append(kept, at)
	}
	return nil
}

// ClearLoginFailures implements app.LoginFailures.
func (s *Store) ClearLoginFailures(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.failures, key)
	return nil
}
