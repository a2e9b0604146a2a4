package consumer

import (
	"context"
	"errors"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Durable consumer names. They are fixed so that replicas share them (and split the work) and a
// restarted process resumes where the last one acknowledged.
const (
	IdentityDurable = "analytics-identity"
	TenantDurable   = "analytics-tenant"
)

// Start runs one durable consumer per publishing context (a consumer reads one stream) until ctx
// ends or stop is called; stop waits for the events being applied.
func Start(ctx context.Context, bus events.Bus, inbox events.Inbox, p *app.Projector, log *slog.Logger) (stop func(), err error) {
	handler := handle(p, log)
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	for _, c := range []struct {
		durable string
		types   []string
	}{{IdentityDurable, app.IdentityEvents}, {TenantDurable, app.TenantEvents}} {
		s, err := bus.Consume(ctx, events.ConsumerConfig{
			Durable: c.durable,
			Types:   c.types,
			Inbox:   inbox,
			Handler: handler,
			Log:     log,
		})
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, s)
	}
	return stopAll, nil
}

// handle applies an event. A malformed event is logged and acknowledged (and so recorded in the
// inbox): redelivering it cannot make it applicable, only spend retries until JetStream gives it
// up. Other failures (the database) return the error so that the event comes back.
func handle(p *app.Projector, log *slog.Logger) events.Handler {
	return func(ctx context.Context, ev events.Event) error {
		err := p.Apply(ctx, ev)
		if errors.Is(err, app.ErrMalformed) {
			log.ErrorContext(ctx, "analytics: skipping an event it cannot apply", "event_id", ev.ID, "event_type", ev.Type, "error", err.Error())
			return nil
		}
		return err
	}
}
