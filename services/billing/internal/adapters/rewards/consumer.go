package rewards

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/app"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// Durable is the name of the durable consumer that grants referral rewards.
const Durable = "billing-referral-rewards"

// Consume grants referral rewards for billing.tenant.first_paid events until ctx ends or it is
// stopped. inbox must belong with the billing store, so that a reward and the record of its
// event commit together; the store's own once-per-referred-tenant record backs that up.
func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, log *slog.Logger) (*events.Consumer, error) {
	if log == nil {
		log = slog.Default()
	}
	h := handler{svc: svc, log: log}
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: Durable,
		Types:   []eventsv1.Type{billingv1.EventTenantFirstPaid},
		Inbox:   inbox,
		Handler: events.Handle(h.apply),
		Log:     log,
	})
}

type handler struct {
	svc *app.Service
	log *slog.Logger
}

// apply grants one event's reward. An event that can never apply (one naming an invalid tenant,
// and by events.Handle one whose payload does not decode) is acknowledged and logged by Consume;
// any other failure (identity or the database unreachable) returns, so the event comes back later.
func (h handler) apply(ctx context.Context, ev events.Event, p *billingv1.TenantFirstPaid) error {
	granted, err := h.svc.GrantReferralReward(ctx, p.GetAppId(), p.GetTenantId())
	if fault.Is(err, fault.KindInvalid) {
		return fmt.Errorf("%w: %v", events.ErrMalformed, err)
	}
	if err != nil {
		return err
	}
	if granted {
		h.log.InfoContext(ctx, "billing: referral reward granted", "event_id", ev.ID, "app_id", p.GetAppId(), "referred_tenant_id", p.GetTenantId())
	}
	return nil
}
