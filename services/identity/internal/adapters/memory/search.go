package memory

import (
	"context"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// SearchUsers implements app.Users by reading every user: the memory store serves development
// and tests, whose apps hold few users.
func (s *Store) SearchUsers(_ context.Context, appID string, q keyset.Search) ([]domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []domain.User
	for _, u := range s.users {
		if u.AppID == appID && !u.Deleted {
			live = append(live, u)
		}
	}
	out := keyset.Select(live, q, app.UserKey)
	for i := range out {
		out[i] = cloneUser(out[i])
	}
	return out, nil
}
