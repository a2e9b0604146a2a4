package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/convert"

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

// ReceivePspx is route 3.
func (s *Server) ReceivePspx(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	r, err := s.svc.ReceivePspx(ctx, convert.Delivery(d))
	if err != nil {
		return nil, err
	}
	return convert.Receipt(r), nil
}

// ReceivePspy is route 4.
func (s *Server) ReceivePspy(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	r, err := s.svc.ReceivePspy(ctx, convert.Delivery(d))
	if err != nil {
		return nil, err
	}
	return convert.Receipt(r), nil
}

// ListEvents lists received calls for operators.
func (s *Server) ListEvents(ctx context.Context, req *webhookv1.ListEventsRequest) (*webhookv1.EventList, error) {
	f, err := convert.ListFilter(req)
	if err != nil {
		return nil, err
	}
	list, err := s.svc.ListEvents(ctx, req.GetAppId(), f)
	if err != nil {
		return nil, err
	}
	return convert.EventList(list), nil
}

// ReplayEvents replays one stored call or a connection's calls of a time range.
func (s *Server) ReplayEvents(ctx context.Context, req *webhookv1.ReplayEventsRequest) (*webhookv1.ReplayResult, error) {
	f, err := convert.ReplayFilter(req)
	if err != nil {
		return nil, err
	}
	r, err := s.svc.ReplayEvents(ctx, req.GetAppId(), req.GetId(), f)
	if err != nil {
		return nil, err
	}
	return convert.ReplayResult(r), nil
}
