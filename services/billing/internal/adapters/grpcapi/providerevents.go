package grpcapi

import (
	"context"

	"github.com/berthhq/berth/services/billing/internal/app"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// EventServer implements billingv1.ProviderEventServiceServer for the webhook-ingest context.
type EventServer struct {
	billingv1.UnimplementedProviderEventServiceServer
	svc *app.Service
}

// ResolvePspxCustomer names the connection of a pspx customer and its signing secrets.
func (e *EventServer) ResolvePspxCustomer(ctx context.Context, req *billingv1.ResolvePspxCustomerRequest) (*billingv1.PspxCustomerConnection, error) {
	c, err := e.svc.ResolvePspxCustomer(ctx, req.GetCustomerId(), req.GetLivemode())
	if err != nil {
		return nil, err
	}
	return &billingv1.PspxCustomerConnection{ConnectionId: c.ConnectionID, AppId: c.AppID, TenantId: c.TenantID, WebhookSecrets: c.WebhookSecrets}, nil
}

// ApplyPspxEvent applies a verified pspx event.
func (e *EventServer) ApplyPspxEvent(ctx context.Context, req *billingv1.ApplyPspxEventRequest) (*billingv1.AppliedEvent, error) {
	return applied(e.svc.ApplyPspxEvent(ctx, req.GetConnectionId(), req.GetLivemode(), req.GetType(), req.GetObject()))
}

// ApplyPspyPayment applies what a pspy payment's state says.
func (e *EventServer) ApplyPspyPayment(ctx context.Context, req *billingv1.ApplyPspyPaymentRequest) (*billingv1.AppliedEvent, error) {
	return applied(e.svc.ApplyPspyPayment(ctx, req.GetConnectionId(), req.GetPaymentId()))
}

func applied(a app.Applied, err error) (*billingv1.AppliedEvent, error) {
	if err != nil {
		return nil, err
	}
	return &billingv1.AppliedEvent{Ignored: a.Ignored, Status: a.Status, Effect: a.Effect, Rejected: a.Rejected}, nil
}

// ListAppConnections names an app's provider connections.
func (e *EventServer) ListAppConnections(ctx context.Context, req *billingv1.ListAppConnectionsRequest) (*billingv1.AppConnections, error) {
	ids, err := e.svc.AppConnectionIDs(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return &billingv1.AppConnections{ConnectionIds: ids}, nil
}
