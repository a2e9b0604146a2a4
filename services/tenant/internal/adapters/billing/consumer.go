package billing

import (
	"context"
	"errors"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/convert"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// Durable is the name of the tenant service's durable consumer of billing events.
const Durable = "tenant-billing"

// ConsumeTenantState applies billing's billing.tenant.changed events to tenants until ctx ends or
// it is stopped. Billing also pushes each state synchronously; the revision in both makes the
// second arrival (and any older state) a no-op. inbox must belong with the tenant store, as for
// every consumer of this service.
func ConsumeTenantState(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, log *slog.Logger) (*events.Consumer, error) {
	if log == nil {
		log = slog.Default()
	}
	h := stateEvents{svc: svc, log: log}
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: Durable,
		Types:   []eventsv1.Type{billingv1.EventTenantChanged},
		Inbox:   inbox,
		Handler: events.Handle(h.apply),
		Log:     log,
	})
}

type stateEvents struct {
	svc *app.Service
	log *slog.Logger
}

// apply handles one event; one that can never apply (no such tenant, and by events.Handle one
// whose payload does not decode) is logged and acknowledged, any other failure returns so the event
// comes back.
func (h stateEvents) apply(ctx context.Context, ev events.Event, p *billingv1.TenantBillingChanged) error {
	err := h.svc.ApplyBillingState(ctx, p.GetAppId(), p.GetTenantId(), p.GetRevision(),
		convert.Billing(p.GetState()), p.GetState().GetPspxOneTimePaymentValidThru())
	if errors.Is(err, domain.ErrNotFound) || fault.Is(err, fault.KindInvalid) {
		h.log.WarnContext(ctx, "tenant: billing state names no tenant of its app; nothing to apply",
			"event_id", ev.ID, "app_id", p.GetAppId(), "tenant_id", p.GetTenantId(), "error", err.Error())
		return nil
	}
	return err
}
