package tenant

import (
	"context"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Durable is the analytics service's durable consumer of tenant events (see identity.Durable).
const Durable = "analytics-tenant"

// Consume feeds the tenant context's events to the read models until ctx ends or it is stopped.
func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, log *slog.Logger) (*events.Consumer, error) {
	return bus.Consume(ctx, events.ConsumerConfig{Durable: Durable, Types: app.TenantEvents, Inbox: inbox, Handler: events.Handle(svc.Apply), Log: log})
}
