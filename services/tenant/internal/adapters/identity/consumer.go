package identity

import (
	"context"
	"errors"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Durable is the name of the tenant service's durable consumer of identity events: replicas share
// it, so each event is applied by one of them, and it names the events' rows in the inbox.
const Durable = "tenant-identity"

// ConsumeUserEvents applies identity's user events to tenants until ctx ends or it is stopped:
// a deleted user who was the last of their tenant retires the tenant (app.Service.UserDeleted).
// inbox must belong with the tenant store (events.NewPGInbox on the store's pool,
// events.NewMemoryInbox with memory stores), so that the tenant change, its outbox event and the
// inbox record commit together and a redelivered event is acknowledged without being applied again.
func ConsumeUserEvents(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, log *slog.Logger) (*events.Consumer, error) {
	if log == nil {
		log = slog.Default()
	}
	h := userEvents{svc: svc, log: log}
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: Durable,
		Types:   []eventsv1.Type{identityv1.EventUserDeleted},
		Inbox:   inbox,
		Handler: events.Handle(h.apply),
		Log:     log,
	})
}

type userEvents struct {
	svc *app.Service
	log *slog.Logger
}

// apply handles one event. An event that can never apply (a tenant this service does not hold, a
// malformed tenant id) is logged and acknowledged, since redelivering it cannot help, and so is one
// whose payload does not decode (events.Handle); every other failure (the database unreachable)
// returns the error so the event comes back.
func (h userEvents) apply(ctx context.Context, ev events.Event, p *identityv1.UserDeleted) error {
	err := h.svc.UserDeleted(ctx, p.GetAppId(), p.GetTenantRef(), p.GetTenantUsersLeft())
	if errors.Is(err, domain.ErrNotFound) || fault.Is(err, fault.KindInvalid) {
		h.log.WarnContext(ctx, "tenant: user.deleted names no tenant of its app; nothing to retire",
			"event_id", ev.ID, "app_id", p.GetAppId(), "tenant_ref", p.GetTenantRef(), "error", err.Error())
		return nil
	}
	return err
}
