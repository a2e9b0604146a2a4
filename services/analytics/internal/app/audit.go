package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// AuditTypes are the event types of the source context that the audit log records: all of them,
// since every event records a change (or a sign-in) someone caused. Each context's stream feeds one
// durable consumer, so the list is per context.
func AuditTypes(source string) []eventsv1.Type {
	var out []eventsv1.Type
	for _, t := range events.Types() {
		if strings.HasPrefix(string(t), source+".") {
			out = append(out, t)
		}
	}
	return out
}

// RecordAudit records the audit entry of one event with its decoded payload. Recording it again
// changes nothing: the entry is keyed by the event id. The entry takes ids and field names from
// the payload, never a value.
func (s *Service) RecordAudit(ctx context.Context, ev events.Event, payload proto.Message) error {
	id, err := canonicalID(ev, "id", ev.ID)
	if err != nil {
		return err
	}
	m := payload.ProtoReflect()
	appID, err := eventApp(ev, stringField(m, "appId"))
	if err != nil {
		return err
	}
	_, entity, _ := strings.Cut(string(ev.Type), ".")
	entity, _, _ = strings.Cut(entity, ".")
	targetType, targetID := domain.Target(entity, appID, func(name string) string { return stringField(m, protoreflect.Name(name)) })
	e := domain.AuditEntry{
		ID: id, AppID: appID, At: ev.Time.UTC().Truncate(time.Microsecond), Action: string(ev.Type),
		TargetType: targetType, TargetID: targetID, ChangedFields: changedFields(m),
	}
	if a := ev.Actor; a != nil {
		e.ActorKind, e.ActorID, e.ActorKeyType = string(a.Kind), a.ID, a.KeyType
		e.RequestID, e.ClientAddress = a.RequestID, a.ClientAddress
	}
	return s.store.RecordAuditEntry(ctx, e)
}

// stringField is the payload's string field name, "" when it has none.
func stringField(m protoreflect.Message, name protoreflect.Name) string {
	f := m.Descriptor().Fields().ByName(name)
	if f == nil || f.Kind() != protoreflect.StringKind || f.IsList() {
		return ""
	}
	return m.Get(f).String()
}

// changedFields are the names an update event's payload lists in changedFields (identity's and
// tenant's update events carry them); nil for a payload without them.
func changedFields(m protoreflect.Message) []string {
	f := m.Descriptor().Fields().ByName("changedFields")
	if f == nil || f.Kind() != protoreflect.StringKind || !f.IsList() {
		return nil
	}
	list := m.Get(f).List()
	if list.Len() == 0 {
		return nil
	}
	out := make([]string, 0, list.Len())
	for i := range list.Len() {
		out = append(out, list.Get(i).String())
	}
	return out
}

// auditActions are the actions a filter may name: every declared event type.
func auditActions() []string {
	types := events.Types()
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = string(t)
	}
	return out
}

// ListAuditEntries visits the caller's app's audit entries that q selects, newest first, from one
// snapshot of the store. The filter is validated before anything is read. A query with a limit is
// one page: the store is asked for one entry more than the page holds, which is not visited but
// tells that older entries follow, and next is then the cursor after the page's last entry ("" on
// the last page, and always without a limit).
func (s *Service) ListAuditEntries(ctx context.Context, appID string, q domain.AuditQuery, v Visitor[domain.AuditEntry]) (next string, err error) {
	app, err := uuid.Parse(appID)
	if err != nil {
		return "", fault.InvalidField("appId", "must be a UUID")
	}
	f, err := domain.ParseAuditFilter(app.String(), q, auditActions())
	if err != nil {
		return "", err
	}
	size := f.Limit
	if size == 0 {
		return "", s.store.VisitAuditEntries(ctx, f, v)
	}
	f.Limit = size + 1
	var (
		seen int
		last domain.AuditEntry
	)
	err = s.store.VisitAuditEntries(ctx, f, Visitor[domain.AuditEntry]{
		Count: func(n int) error { return v.Count(min(n, size)) },
		Each: func(e domain.AuditEntry) error {
			if seen++; seen > size {
				next = last.Position().Encode()
				return nil
			}
			last = e
			return v.Each(e)
		},
	})
	if err != nil {
		return "", err
	}
	return next, nil
}

// SetAuditRetention sets how many days the app's audit entries are kept; entries older than that
// go with the next pruning.
func (s *Service) SetAuditRetention(ctx context.Context, appID string, days int) error {
	app, err := uuid.Parse(appID)
	if err != nil {
		return fault.InvalidField("appId", "must be a UUID")
	}
	if err := domain.CheckAuditRetention(days); err != nil {
		return err
	}
	return s.store.SetAuditRetention(ctx, app.String(), days)
}

// AuditRetention is how many days the app's audit entries are kept.
func (s *Service) AuditRetention(ctx context.Context, appID string) (int, error) {
	app, err := uuid.Parse(appID)
	if err != nil {
		return 0, fault.InvalidField("appId", "must be a UUID")
	}
	return s.store.AuditRetention(ctx, app.String())
}

// PruneAudit deletes the audit entries every app keeps beyond its retention.
func (s *Service) PruneAudit(ctx context.Context) (int, error) {
	return s.store.PruneAuditEntries(ctx, s.clock())
}

// RunAuditPruning prunes the audit log every interval until ctx ends. Replicas may prune at the
// same time: a delete of rows another replica deleted deletes nothing, so no lock is needed.
func (s *Service) RunAuditPruning(ctx context.Context, every time.Duration, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if n, err := s.PruneAudit(ctx); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "analytics: pruning the audit log failed", "err", err)
		} else if n > 0 {
			log.InfoContext(ctx, "analytics: pruned the audit log", "entries", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
