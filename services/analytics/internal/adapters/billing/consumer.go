package billing

import (
	"context"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Durable is the analytics service's durable consumer of billing events (see identity.Durable).
const Durable = "analytics-billing"

// Consume feeds billing's money events to the read models until ctx ends or it is stopped.
func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, log *slog.Logger) (*events.Consumer, error) {
	return bus.Consume(ctx, events.ConsumerConfig{Durable: Durable, Types: app.BillingEvents, Inbox: inbox, Handler: events.Handle(svc.Apply), Log: log})
}
