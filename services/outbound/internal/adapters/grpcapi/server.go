package grpcapi

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/convert"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// Server implements outboundv1.OutboundServiceServer.
type Server struct {
	outboundv1.UnimplementedOutboundServiceServer
	svc *app.Service
}

// Register serves svc's routes on s.
func Register(s grpc.ServiceRegistrar, svc *app.Service) {
	outboundv1.RegisterOutboundServiceServer(s, &Server{svc: svc})
}

// CreateWebhookEndpoint registers an endpoint; the answer carries its secret, this once.
func (s *Server) CreateWebhookEndpoint(ctx context.Context, req *outboundv1.CreateWebhookEndpointRequest) (*outboundv1.WebhookEndpoint, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.svc.CreateEndpoint(ctx, caller, req.GetAppId(), convert.EndpointInput(req.GetEndpoint()))
	if err != nil {
		return nil, err
	}
	return convert.Endpoint(v.Endpoint, v.Secret), nil
}

// ListWebhookEndpoints lists the app's endpoints.
func (s *Server) ListWebhookEndpoints(ctx context.Context, req *outboundv1.ListWebhookEndpointsRequest) (*outboundv1.WebhookEndpointList, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	es, err := s.svc.ListEndpoints(ctx, caller, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.EndpointList(es), nil
}

// GetWebhookEndpoint reads one endpoint.
func (s *Server) GetWebhookEndpoint(ctx context.Context, req *outboundv1.GetWebhookEndpointRequest) (*outboundv1.WebhookEndpoint, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.svc.GetEndpoint(ctx, caller, req.GetAppId(), req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return convert.Endpoint(e, ""), nil
}

// UpdateWebhookEndpoint changes the fields the patch sends.
func (s *Server) UpdateWebhookEndpoint(ctx context.Context, req *outboundv1.UpdateWebhookEndpointRequest) (*outboundv1.WebhookEndpoint, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.svc.UpdateEndpoint(ctx, caller, req.GetAppId(), req.GetEndpointId(), convert.EndpointPatch(req.GetPatch()))
	if err != nil {
		return nil, err
	}
	return convert.Endpoint(e, ""), nil
}

// DeleteWebhookEndpoint removes an endpoint with its deliveries.
func (s *Server) DeleteWebhookEndpoint(ctx context.Context, req *outboundv1.DeleteWebhookEndpointRequest) (*emptypb.Empty, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.DeleteEndpoint(ctx, caller, req.GetAppId(), req.GetEndpointId()); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// RotateWebhookEndpointSecret gives the endpoint a new secret, answered this once.
func (s *Server) RotateWebhookEndpointSecret(ctx context.Context, req *outboundv1.RotateWebhookEndpointSecretRequest) (*outboundv1.WebhookEndpoint, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.svc.RotateSecret(ctx, caller, req.GetAppId(), req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return convert.Endpoint(v.Endpoint, v.Secret), nil
}

// ListWebhookDeliveries lists an endpoint's newest deliveries with their attempts.
func (s *Server) ListWebhookDeliveries(ctx context.Context, req *outboundv1.ListWebhookDeliveriesRequest) (*outboundv1.WebhookDeliveryList, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	vs, err := s.svc.ListDeliveries(ctx, caller, req.GetAppId(), req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return convert.DeliveryList(vs), nil
}

// RetryWebhookDelivery makes a delivery due now.
func (s *Server) RetryWebhookDelivery(ctx context.Context, req *outboundv1.RetryWebhookDeliveryRequest) (*outboundv1.WebhookDelivery, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.svc.RetryDelivery(ctx, caller, req.GetAppId(), req.GetEndpointId(), req.GetDeliveryId())
	if err != nil {
		return nil, err
	}
	return convert.Delivery(v), nil
}

// RecoverWebhookDeliveries sends an endpoint's failed deliveries since a time again.
func (s *Server) RecoverWebhookDeliveries(ctx context.Context, req *outboundv1.RecoverWebhookDeliveriesRequest) (*outboundv1.WebhookRecovery, error) {
	caller, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.svc.RecoverDeliveries(ctx, caller, req.GetAppId(), req.GetEndpointId(), req.GetRecovery().GetSince())
	if err != nil {
		return nil, err
	}
	return convert.Recovery(r), nil
}
