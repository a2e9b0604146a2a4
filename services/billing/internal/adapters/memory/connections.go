package memory

import (
	"context"
	"slices"

	"github.com/berthhq/berth/services/billing/internal/domain"
)

func cloneConnection(c domain.Connection) domain.Connection {
	c.TestKey, c.LiveKey = slices.Clone(c.TestKey), slices.Clone(c.LiveKey)
	c.WebhookSecrets = slices.Clone(c.WebhookSecrets)
	for i := range c.WebhookSecrets {
		c.WebhookSecrets[i].Sealed = slices.Clone(c.WebhookSecrets[i].Sealed)
	}
	return c
}

// CreateConnection stores c.
func (s *Store) CreateConnection(_ context.Context, c domain.Connection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connections = append(s.connections, cloneConnection(c))
	return nil
}

// Connection returns the connection with id.
func (s *Store) Connection(_ context.Context, id string) (domain.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.connections, func(c domain.Connection) bool { return c.ID == id })
	if i < 0 {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	return cloneConnection(s.connections[i]), nil
}

// Connections lists the app's connections.
func (s *Store) Connections(_ context.Context, appID string) ([]domain.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Connection
	for _, c := range s.connections {
		if c.AppID == appID {
			out = append(out, cloneConnection(c))
		}
	}
	return out, nil
}

// UpdateConnection runs fn on a copy and stores it when fn succeeds.
func (s *Store) UpdateConnection(_ context.Context, id string, fn func(*domain.Connection) error) (domain.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.connections, func(c domain.Connection) bool { return c.ID == id })
	if i < 0 {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	next := cloneConnection(s.connections[i])
	if err := fn(&next); err != nil {
		return domain.Connection{}, err
	}
	s.connections[i] = cloneConnection(next)
	return next, nil
}
