package convert

import (
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// Delivery is a provider call as the edge received it (routes 3 and 4).
func Delivery(d *webhookv1.Delivery) app.Delivery {
	return app.Delivery{Body: d.GetBody(), ContentType: d.GetContentType(), Signature: d.GetSignature(), Host: d.GetHost(),
		PaymentProviderUUID: d.GetPaymentProviderUuid()}
}

// Receipt is the answer body of routes 3 and 4. Its optional fields are set only when they say
// something, so the edge renders exactly the keys the answer needs.
func Receipt(r app.Receipt) *webhookv1.Receipt {
	out := &webhookv1.Receipt{Received: true}
	if r.WrongHost {
		out.Host, out.WrongHost = proto.String(r.Host), proto.Bool(true)
	}
	if r.Ignored {
		out.Ignored = proto.Bool(true)
	}
	if r.Status != "" {
		out.Status = proto.String(r.Status)
	}
	return out
}

// ListFilter is the operators' list request as a filter of stored calls.
func ListFilter(req *webhookv1.ListEventsRequest) (domain.Filter, error) {
	f, err := filter(req.GetConnectionId(), req.GetSince(), req.GetUntil())
	if err != nil {
		return domain.Filter{}, err
	}
	f.Outcome, f.Provider, f.Limit = req.GetOutcome(), req.GetProvider(), int(req.GetLimit())
	return f, nil
}

// ReplayFilter is the range of a replay request: a connection's calls received in [since, until).
func ReplayFilter(req *webhookv1.ReplayEventsRequest) (domain.Filter, error) {
	return filter(req.GetConnectionId(), req.GetSince(), req.GetUntil())
}

// filter reads a connection and a time range; a time that is not RFC 3339 is the caller's fault.
func filter(connectionID, since, until string) (domain.Filter, error) {
	f := domain.Filter{ConnectionID: connectionID}
	for _, t := range []struct {
		field, value string
		into         *time.Time
	}{{"since", since, &f.Since}, {"until", until, &f.Until}} {
		if t.value == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return domain.Filter{}, fault.InvalidField(t.field, "must be an RFC 3339 time")
		}
		*t.into = v.UTC()
	}
	return f, nil
}

// EventList is the operators' list of stored calls, in the order given.
func EventList(list []domain.Event) *webhookv1.EventList {
	out := &webhookv1.EventList{Events: make([]*webhookv1.Event, 0, len(list))}
	for _, e := range list {
		out.Events = append(out.Events, Event(e))
	}
	return out
}

// Event is one stored call as operators see it: its body's size, not the body.
func Event(e domain.Event) *webhookv1.Event {
	return &webhookv1.Event{Id: e.ID, Provider: e.Provider, ProviderEventId: e.ProviderEventID, Type: e.Type,
		ConnectionId: e.ConnectionID, Test: e.Test, Outcome: e.Outcome, Attempts: e.Attempts, LastError: e.LastError,
		ReceivedAt: timestamp(e.ReceivedAt), AppliedAt: timestamp(e.AppliedAt), BodyBytes: int32(len(e.Body))}
}

// ReplayResult counts what a replay did.
func ReplayResult(r app.Replayed) *webhookv1.ReplayResult {
	return &webhookv1.ReplayResult{Replayed: int32(r.Replayed), Applied: int32(r.Applied), Failed: int32(r.Failed)}
}

// timestamp is t in RFC 3339 UTC, "" for the zero time (a call not applied yet).
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
