package memory

import (
	"bytes"
	"context"
	"strings"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// UpdateAPIKey implements app.APIKeys.
func (s *Store) UpdateAPIKey(ctx context.Context, id string, fn func(*domain.APIKey) ([]events.Event, error)) (domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.keys[id]
	if !ok {
		return domain.APIKey{}, domain.NotFound("API key")
	}
	next := cur
	next.Hash = bytes.Clone(cur.Hash)
	evs, err := fn(&next)
	if err != nil {
		return domain.APIKey{}, err
	}
	// Only the descriptive fields may change: the id is the key, the app and hash are fixed.
	cur.Name, cur.Description, cur.UpdatedAt = next.Name, next.Description, next.UpdatedAt
	s.keys[id] = cur
	s.outbox.Add(ctx, evs...)
	out := cur
	out.Hash = bytes.Clone(cur.Hash)
	return out, nil
}

// AddProjectMember implements app.ProjectMembers.
func (s *Store) AddProjectMember(_ context.Context, m domain.ProjectMember) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addMember(m)
}

// addMember stores m unless its project is unknown or has a member of its email. Callers hold mu.
func (s *Store) addMember(m domain.ProjectMember) error {
	if _, ok := s.projects[m.ProjectID]; !ok {
		return domain.NotFound("project")
	}
	for _, other := range s.members {
		if other.ProjectID == m.ProjectID && strings.EqualFold(other.Email, m.Email) {
			return domain.ErrMemberTaken
		}
	}
	s.members[m.ID] = cloneMember(m)
	return nil
}

// GetProjectMember implements app.ProjectMembers.
func (s *Store) GetProjectMember(_ context.Context, id string) (domain.ProjectMember, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.members[id]
	if !ok {
		return domain.ProjectMember{}, domain.NotFound("project member")
	}
	return cloneMember(m), nil
}

// GetOperatorKey implements app.OperatorKeys.
func (s *Store) GetOperatorKey(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.operatorKey == nil {
		return nil, domain.NotFound("operator key")
	}
	return bytes.Clone(s.operatorKey), nil
}

// CreateOperatorKey implements app.OperatorKeys.
func (s *Store) CreateOperatorKey(_ context.Context, sealed []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.operatorKey == nil {
		s.operatorKey = bytes.Clone(sealed)
	}
	return bytes.Clone(s.operatorKey), nil
}
