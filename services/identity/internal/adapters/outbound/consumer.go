package outbound

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// Durable is the name of identity's durable consumer of outbound events: replicas share it, so
// each event is handled by one of them, and it names the events' rows in the inbox.
const Durable = "identity-outbound"

// Notifier is the use case the consumer drives (app.Service).
type Notifier interface {
	NotifyEndpointDisabled(ctx context.Context, d app.DisabledEndpoint) error
}

// ConsumeEndpointEvents mails the project members of an app whose endpoint outbound disabled,
// until ctx ends or it is stopped. inbox must belong with identity's store (events.NewPGInbox on
// its pool, events.NewMemoryInbox with the memory store): the event's record commits only after
// every mail went out, so a redelivered event mails nobody again.
func ConsumeEndpointEvents(ctx context.Context, bus events.Bus, inbox events.Inbox, n Notifier, log *slog.Logger) (*events.Consumer, error) {
	if log == nil {
		log = slog.Default()
	}
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: Durable,
		Types:   []eventsv1.Type{outboundv1.EventEndpointDisabled},
		Inbox:   inbox,
		Handler: events.Handle(endpointEvents{n: n, log: log}.apply),
		Log:     log,
	})
}

// Handler is the consumer's handler, for tests that deliver events through an inbox themselves.
func Handler(n Notifier, log *slog.Logger) events.Handler {
	if log == nil {
		log = slog.Default()
	}
	return events.Handle(endpointEvents{n: n, log: log}.apply)
}

type endpointEvents struct {
	n   Notifier
	log *slog.Logger
}

// apply mails one disabled endpoint. A notice that can never be sent (the app is gone, the
// deployment has no mailer) is logged and acknowledged, since redelivering it cannot help; a
// failed send returns the error so the event comes back.
func (h endpointEvents) apply(ctx context.Context, ev events.Event, p *outboundv1.EndpointDisabled) error {
	since, err := time.Parse(time.RFC3339Nano, p.GetFailingSince())
	if err != nil {
		h.log.ErrorContext(ctx, "identity: outbound.endpoint.disabled has no valid failingSince; its notice is not mailed",
			"event_id", ev.ID, "app_id", p.GetAppId(), "endpoint_id", p.GetEndpointId())
		return nil
	}
	err = h.n.NotifyEndpointDisabled(ctx, app.DisabledEndpoint{AppID: p.GetAppId(), EndpointID: p.GetEndpointId(), URL: p.GetUrl(), FailingSince: since})
	switch {
	case errors.Is(err, app.ErrNoMailer):
		h.log.WarnContext(ctx, "identity: a webhook endpoint was disabled, but this deployment has no mailer to tell its operators",
			"event_id", ev.ID, "app_id", p.GetAppId(), "endpoint_id", p.GetEndpointId())
		return nil
	case errors.Is(err, domain.ErrNotFound):
		h.log.WarnContext(ctx, "identity: outbound.endpoint.disabled names no app of identity; nobody to tell",
			"event_id", ev.ID, "app_id", p.GetAppId(), "endpoint_id", p.GetEndpointId())
		return nil
	}
	return err
}
