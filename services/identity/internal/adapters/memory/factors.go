package memory

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func cloneFactor(f domain.Factor) domain.Factor {
	f.SealedSecret = bytes.Clone(f.SealedSecret)
	if f.ConfirmedAt != nil {
		at := *f.ConfirmedAt
		f.ConfirmedAt = &at
	}
	if f.LastUsedAt != nil {
		at := *f.LastUsedAt
		f.LastUsedAt = &at
	}
	return f
}

func cloneRecoveryCodes(codes []domain.RecoveryCode) []domain.RecoveryCode {
	out := make([]domain.RecoveryCode, len(codes))
	for i, c := range codes {
		c.Hash = bytes.Clone(c.Hash)
		if c.UsedAt != nil {
			at := *c.UsedAt
			c.UsedAt = &at
		}
		out[i] = c
	}
	return out
}

// userFactors returns the user's factors, oldest first; the caller holds the lock.
func (s *Store) userFactors(appID, userID string) []domain.Factor {
	out := []domain.Factor{}
	for _, f := range s.factors {
		if f.AppID == appID && f.UserID == userID {
			out = append(out, cloneFactor(f))
		}
	}
	slices.SortFunc(out, func(a, b domain.Factor) int { return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID)) })
	return out
}

// SavePendingFactor implements app.Factors.
func (s *Store) SavePendingFactor(_ context.Context, f domain.Factor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userExists(f.AppID, f.UserID) {
		return domain.NotFound("user")
	}
	for _, old := range s.factors {
		if old.AppID == f.AppID && old.UserID == f.UserID && old.Kind == f.Kind && old.Confirmed() && f.Kind.Single() {
			return domain.ErrFactorEnrolled
		}
	}
	for id, old := range s.factors {
		if old.AppID == f.AppID && old.UserID == f.UserID && old.Kind == f.Kind && !old.Confirmed() {
			delete(s.factors, id)
		}
	}
	f.ConfirmedAt = nil
	s.factors[f.ID] = cloneFactor(f)
	return nil
}

// ListFactors implements app.Factors.
func (s *Store) ListFactors(_ context.Context, appID, userID string) ([]domain.Factor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userFactors(appID, userID), nil
}

// ConfirmFactor implements app.Factors.
func (s *Store) ConfirmFactor(ctx context.Context, appID, userID, id string, step int64, now time.Time, codes []domain.RecoveryCode, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.factors[id]
	if !ok || f.AppID != appID || f.UserID != userID || f.Confirmed() {
		return domain.NotFound("second factor")
	}
	at := now.UTC()
	f.ConfirmedAt, f.LastStep = &at, step
	s.factors[id] = f
	if codes != nil {
		s.recovery[userID] = cloneRecoveryCodes(codes)
	}
	s.outbox.Add(ctx, evs...)
	return nil
}

// UseFactorStep implements app.Factors.
func (s *Store) UseFactorStep(_ context.Context, appID, userID, id string, step int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.factors[id]
	if !ok || f.AppID != appID || f.UserID != userID || !f.Confirmed() {
		return domain.NotFound("second factor")
	}
	if step <= f.LastStep {
		return domain.ErrCodeReplayed
	}
	f.LastStep = step
	s.factors[id] = f
	return nil
}

// ReplaceRecoveryCodes implements app.Factors.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, appID, userID string, codes []domain.RecoveryCode, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.userExists(appID, userID) {
		return domain.NotFound("user")
	}
	s.recovery[userID] = cloneRecoveryCodes(codes)
	s.outbox.Add(ctx, evs...)
	return nil
}

// unusedCodes counts the user's unused recovery codes; the caller holds the lock.
func (s *Store) unusedCodes(appID, userID string) int {
	n := 0
	for _, c := range s.recovery[userID] {
		if c.AppID == appID && c.UsedAt == nil {
			n++
		}
	}
	return n
}

// UseRecoveryCode implements app.Factors.
func (s *Store) UseRecoveryCode(ctx context.Context, appID, userID string, hash []byte, now time.Time, fn func(left int) ([]events.Event, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	codes := s.recovery[userID]
	for i, c := range codes {
		if c.AppID != appID || c.UsedAt != nil || subtle.ConstantTimeCompare(c.Hash, hash) != 1 {
			continue
		}
		evs, err := fn(s.unusedCodes(appID, userID) - 1)
		if err != nil {
			return err
		}
		at := now.UTC()
		codes[i].UsedAt = &at
		s.outbox.Add(ctx, evs...)
		return nil
	}
	return domain.NotFound("recovery code")
}

// CountRecoveryCodes implements app.Factors.
func (s *Store) CountRecoveryCodes(_ context.Context, appID, userID string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unusedCodes(appID, userID), nil
}

// RemoveFactors implements app.Factors: factors, codes, sessions and events change under the
// store's lock, so all happen or none.
func (s *Store) RemoveFactors(ctx context.Context, appID, userID string, now time.Time, fn func(removed []domain.Factor, revoked []string) ([]events.Event, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	removed := s.userFactors(appID, userID)
	mine := func(f domain.RefreshFamily) bool { return f.AppID == appID && f.UserID == userID && !f.Revoked }
	live := []string{}
	for _, f := range s.families {
		if mine(f) && f.Live(now) {
			live = append(live, f.ID)
		}
	}
	slices.Sort(live)
	evs, err := fn(removed, live)
	if err != nil {
		return err
	}
	for _, f := range removed {
		delete(s.factors, f.ID)
	}
	if s.userExists(appID, userID) {
		delete(s.recovery, userID)
	}
	s.revokeFamilies(mine)
	s.outbox.Add(ctx, evs...)
	return nil
}
