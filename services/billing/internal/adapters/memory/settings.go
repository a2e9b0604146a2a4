package memory

import (
	"context"

	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Settings returns the app's settings or the defaults.
func (s *Store) Settings(_ context.Context, appID string) (domain.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settingsOf(appID), nil
}

func (s *Store) settingsOf(appID string) domain.Settings {
	if st, ok := s.settings[appID]; ok {
		return st
	}
	return domain.DefaultSettings(appID)
}

// UpdateSettings runs fn on the app's settings and stores them when fn succeeds.
func (s *Store) UpdateSettings(_ context.Context, appID string, fn func(*domain.Settings) error) (domain.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settingsOf(appID)
	if err := fn(&st); err != nil {
		return domain.Settings{}, err
	}
	s.settings[appID] = st
	return st, nil
}
