package stream

import (
	"context"
	"log/slog"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/app"
)

// Contexts are the contexts whose events become public ones; each has a durable consumer
// "outbound-<context>" (events.ConsumerConfig reads one context's stream).
var Contexts = []string{"identity", "tenant", "billing"}

// Consume reads source's events that become public ones until ctx ends or it is stopped. inbox
// must belong with the outbound store (events.NewPGInbox on the store's pool, events.NewMemoryInbox
// with memory stores), so a redelivered event is acknowledged without recording its deliveries
// twice. Replicas share the durable, so each event is handled by one of them.
func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, source string, log *slog.Logger) (*events.Consumer, error) {
	if log == nil {
		log = slog.Default()
	}
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: "outbound-" + source,
		Types:   app.InternalTypes(source),
		Inbox:   inbox,
		Handler: events.Handle(func(ctx context.Context, ev events.Event, payload proto.Message) error {
			return svc.Publish(ctx, ev, payload)
		}),
		Log: log,
	})
}
