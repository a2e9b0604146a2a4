package stream

import (
	"context"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/app"
)

// batch is at most how many waiting events one inbox transaction records deliveries for: a busy
// app's events then share a commit instead of paying one each (events.ConsumerConfig.Batch).
// Recording deliveries is all the handler does, so a rolled-back batch takes back everything, and
// the batch's deliveries are recorded together (app.Service.PublishAll).
const batch = 64

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
		Durable:      "outbound-" + source,
		Types:        app.InternalTypes(source),
		Inbox:        inbox,
		Batch:        batch,
		Handler:      events.Handle(svc.Publish),
		BatchHandler: events.HandleBatch(svc.PublishAll),
		Log:          log,
	})
}
