package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/berthhq/berth/pkg/events"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// EventLog is where the events analytics applies are kept (JetStream's streams): it can hand every
// stored event of some types to a handler again.
type EventLog interface {
	Replay(ctx context.Context, types []eventsv1.Type, fn events.Handler) (events.ReplayStats, error)
}

// Rebuild empties the read models, then replays every stored event of the types the consumers
// apply. Since the projection is idempotent and snapshots only move forward, the durable consumers
// may keep applying new events meanwhile: whichever applies an event first, the outcome is the
// same, and the answers afterwards equal those of the store the consumers had built.
func (s *Service) Rebuild(ctx context.Context) (events.ReplayStats, error) {
	if s.events == nil {
		return events.ReplayStats{}, errors.New("analytics: no event log to rebuild from")
	}
	if err := s.store.Reset(ctx); err != nil {
		return events.ReplayStats{}, fmt.Errorf("empty the read models: %w", err)
	}
	return s.events.Replay(ctx, slices.Concat(IdentityEvents, TenantEvents, BillingEvents), events.Handle(s.Apply))
}
