package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// Server implements the ingest and admin services.
type Server struct {
	webhookv1.UnimplementedWebhookIngestServiceServer
	webhookv1.UnimplementedWebhookAdminServiceServer
	svc *app.Service
}

// Register serves both services of svc on s.
func Register(s grpc.ServiceRegistrar, svc *app.Service) {
	srv := &Server{svc: svc}
	webhookv1.RegisterWebhookIngestServiceServer(s, srv)
	webhookv1.RegisterWebhookAdminServiceServer(s, srv)
}

func delivery(d *webhookv1.Delivery) app.Delivery {
	return app.Delivery{Body: d.GetBody(), ContentType: d.GetContentType(), Signature: d.GetSignature(), Host: d.GetHost(),
		PaymentProviderUUID: d.GetPaymentProviderUuid()}
}

func receipt(r app.Receipt, err error) (*webhookv1.Receipt, error) {
	if err != nil {
		return nil, err
	}
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
	return out, nil
}

// ReceivePspx is route 3.
func (s *Server) ReceivePspx(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	return receipt(s.svc.ReceivePspx(ctx, delivery(d)))
}

// ReceivePspy is route 4.
func (s *Server) ReceivePspy(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	return receipt(s.svc.ReceivePspy(ctx, delivery(d)))
}

// ListEvents lists received calls for operators.
func (s *Server) ListEvents(ctx context.Context, req *webhookv1.ListEventsRequest) (*webhookv1.EventList, error) {
	f, err := filter(req.GetConnectionId(), req.GetSince(), req.GetUntil())
	if err != nil {
		return nil, err
	}
	f.Outcome, f.Provider, f.Limit = req.GetOutcome(), req.GetProvider(), int(req.GetLimit())
	list, err := s.svc.ListEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &webhookv1.EventList{Events: make([]*webhookv1.Event, 0, len(list))}
	for _, e := range list {
		out.Events = append(out.Events, &webhookv1.Event{Id: e.ID, Provider: e.Provider, ProviderEventId: e.ProviderEventID, Type: e.Type,
			ConnectionId: e.ConnectionID, Test: e.Test, Outcome: e.Outcome, Attempts: e.Attempts, LastError: e.LastError,
			ReceivedAt: stamp(e.ReceivedAt), AppliedAt: stamp(e.AppliedAt), BodyBytes: int32(len(e.Body))})
	}
	return out, nil
}

// ReplayEvents replays one stored call or a connection's calls of a time range.
func (s *Server) ReplayEvents(ctx context.Context, req *webhookv1.ReplayEventsRequest) (*webhookv1.ReplayResult, error) {
	f, err := filter(req.GetConnectionId(), req.GetSince(), req.GetUntil())
	if err != nil {
		return nil, err
	}
	r, err := s.svc.ReplayEvents(ctx, req.GetId(), f)
	if err != nil {
		return nil, err
	}
	return &webhookv1.ReplayResult{Replayed: int32(r.Replayed), Applied: int32(r.Applied), Failed: int32(r.Failed)}, nil
}

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

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
