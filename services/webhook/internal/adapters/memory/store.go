package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"
)

// Store implements app.Store under one mutex.
type Store struct {
	mu     sync.Mutex
	events []domain.Event // in arrival order, which is receipt order
}

// New returns an empty store.
func New() *Store { return &Store{} }

// Record stores e unless its dedupe key is stored.
func (s *Store) Record(_ context.Context, e domain.Event) (domain.Event, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.DedupeKey != "" {
		if i := slices.IndexFunc(s.events, func(x domain.Event) bool { return x.Provider == e.Provider && x.DedupeKey == e.DedupeKey }); i >= 0 {
			return clone(s.events[i]), false, nil
		}
	}
	e = clone(e)
	s.events = append(s.events, e)
	return clone(e), true, nil
}

// Finish records an attempt.
func (s *Store) Finish(_ context.Context, id string, a app.Attempt) (domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.events, func(x domain.Event) bool { return x.ID == id })
	if i < 0 {
		return domain.Event{}, domain.ErrEventNotFound
	}
	app.Finish(&s.events[i], a)
	return clone(s.events[i]), nil
}

// Event returns a stored call.
func (s *Store) Event(_ context.Context, id string) (domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.events, func(x domain.Event) bool { return x.ID == id })
	if i < 0 {
		return domain.Event{}, domain.ErrEventNotFound
	}
	return clone(s.events[i]), nil
}

// Events lists matching calls, newest first.
func (s *Store) Events(_ context.Context, f domain.Filter) ([]domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.Event{}
	for _, e := range slices.Backward(s.events) {
		if len(out) == f.Limit {
			break
		}
		if app.Matches(e, f) {
			out = append(out, clone(e))
		}
	}
	return out, nil
}

func clone(e domain.Event) domain.Event {
	e.Body = slices.Clone(e.Body)
	return e
}
