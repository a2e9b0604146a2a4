package audit

import (
	"context"
	"log/slog"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

// Durable is the name of the audit log's durable consumer of source's stream. It is fixed so that
// replicas share it and a restarted process resumes where the last one acknowledged.
func Durable(source string) string { return "analytics-audit-" + source }

// Consume records source's events in the audit log until ctx ends or it is stopped. The inbox must
// belong with the analytics store, so an entry commits with its inbox record.
func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox, svc *app.Service, source string, log *slog.Logger) (*events.Consumer, error) {
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: Durable(source),
		Types:   app.AuditTypes(source),
		Inbox:   inbox,
		Handler: events.Handle(func(ctx context.Context, ev events.Event, payload proto.Message) error {
			return svc.RecordAudit(ctx, ev, payload)
		}),
		Log: log,
	})
}
