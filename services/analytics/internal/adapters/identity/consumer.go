package identity

import (
	"context"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Durable is the analytics service's durable consumer of identity events. The name is fixed so
// that replicas share it (and split the work) and a restarted process resumes where the last one
// acknowledged.
const Durable = "analytics-identity"

// Consume feeds identity's user events to the read models until ctx ends or it is stopped. A
// malformed event is logged and acknowledged (see events.ErrMalformed); other failures bring the
// event back.
func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, log *slog.Logger) (*events.Consumer, error) {
	return bus.Consume(ctx, events.ConsumerConfig{Durable: Durable, Types: app.IdentityEvents, Inbox: inbox, Handler: events.Handle(svc.Apply), Log: log})
}
