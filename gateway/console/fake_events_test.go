package console

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// The fake's outbound answers: one endpoint of testApp with one failed delivery of two attempts.
const (
	endpointID = "7c3e1d2a-3333-4444-8555-b66667777888"
	deliveryID = "8d4f2e3b-4444-4555-8666-c77778888999"
	inboundID  = "9e5a3f4c-5555-4666-8777-d88889999aaa"
)

func (f *fake) webhookEndpoint() *outboundv1.WebhookEndpoint {
	return &outboundv1.WebhookEndpoint{Kind: "webhookEndpoint", Id: endpointID, Url: "https://hooks.example/berth?x=<y>",
		Events: []string{"user.created", "user.updated"}, Description: "the shop's receiver", CreatedAt: "2026-11-20T08:00:00Z", UpdatedAt: "2026-11-21T08:00:00Z"}
}

func (f *fake) ListWebhookEndpoints(ctx context.Context, in *outboundv1.ListWebhookEndpointsRequest, _ ...grpc.CallOption) (*outboundv1.WebhookEndpointList, error) {
	if err := f.record(ctx, "ListWebhookEndpoints", in); err != nil {
		return nil, err
	}
	return &outboundv1.WebhookEndpointList{Kind: "webhookEndpointList", ItemsLength: 1, Items: []*outboundv1.WebhookEndpoint{f.webhookEndpoint()}}, nil
}

func (f *fake) GetWebhookEndpoint(ctx context.Context, in *outboundv1.GetWebhookEndpointRequest, _ ...grpc.CallOption) (*outboundv1.WebhookEndpoint, error) {
	if err := f.record(ctx, "GetWebhookEndpoint", in); err != nil {
		return nil, err
	}
	return f.webhookEndpoint(), nil
}

func (f *fake) CreateWebhookEndpoint(ctx context.Context, in *outboundv1.CreateWebhookEndpointRequest, _ ...grpc.CallOption) (*outboundv1.WebhookEndpoint, error) {
	if err := f.record(ctx, "CreateWebhookEndpoint", in); err != nil {
		return nil, err
	}
	ep := f.webhookEndpoint()
	secret := "whsec_created_shown_once"
	ep.Url, ep.Events, ep.Secret = in.GetEndpoint().GetUrl(), in.GetEndpoint().GetEvents(), &secret
	return ep, nil
}

func (f *fake) UpdateWebhookEndpoint(ctx context.Context, in *outboundv1.UpdateWebhookEndpointRequest, _ ...grpc.CallOption) (*outboundv1.WebhookEndpoint, error) {
	if err := f.record(ctx, "UpdateWebhookEndpoint", in); err != nil {
		return nil, err
	}
	return f.webhookEndpoint(), nil
}

func (f *fake) DeleteWebhookEndpoint(ctx context.Context, in *outboundv1.DeleteWebhookEndpointRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "DeleteWebhookEndpoint", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fake) RotateWebhookEndpointSecret(ctx context.Context, in *outboundv1.RotateWebhookEndpointSecretRequest, _ ...grpc.CallOption) (*outboundv1.WebhookEndpoint, error) {
	if err := f.record(ctx, "RotateWebhookEndpointSecret", in); err != nil {
		return nil, err
	}
	ep := f.webhookEndpoint()
	secret := "whsec_rotated_shown_once"
	ep.Secret = &secret
	return ep, nil
}

func (f *fake) ListWebhookDeliveries(ctx context.Context, in *outboundv1.ListWebhookDeliveriesRequest, _ ...grpc.CallOption) (*outboundv1.WebhookDeliveryList, error) {
	if err := f.record(ctx, "ListWebhookDeliveries", in); err != nil {
		return nil, err
	}
	return &outboundv1.WebhookDeliveryList{Items: []*outboundv1.WebhookDelivery{{Id: deliveryID, EndpointId: endpointID, Type: "user.updated",
		Status: "failed", CreatedAt: "2026-11-26T10:00:00Z", Attempts: []*outboundv1.WebhookAttempt{
			{At: "2026-11-26T10:00:01Z", Status: 500, Response: "<b>receiver down</b>", DurationMs: 12},
			{At: "2026-11-26T10:00:06Z", Error: "connection refused", DurationMs: 3},
		}}}}, nil
}

func (f *fake) RetryWebhookDelivery(ctx context.Context, in *outboundv1.RetryWebhookDeliveryRequest, _ ...grpc.CallOption) (*outboundv1.WebhookDelivery, error) {
	if err := f.record(ctx, "RetryWebhookDelivery", in); err != nil {
		return nil, err
	}
	return &outboundv1.WebhookDelivery{Id: in.GetDeliveryId(), Status: "pending"}, nil
}

func (f *fake) RecoverWebhookDeliveries(ctx context.Context, in *outboundv1.RecoverWebhookDeliveriesRequest, _ ...grpc.CallOption) (*outboundv1.WebhookRecovery, error) {
	if err := f.record(ctx, "RecoverWebhookDeliveries", in); err != nil {
		return nil, err
	}
	return &outboundv1.WebhookRecovery{Since: in.GetRecovery().GetSince(), Deliveries: 1}, nil
}

func (f *fake) ListEvents(ctx context.Context, in *webhookv1.ListEventsRequest, _ ...grpc.CallOption) (*webhookv1.EventList, error) {
	if err := f.record(ctx, "ListEvents", in); err != nil {
		return nil, err
	}
	return &webhookv1.EventList{Events: []*webhookv1.Event{{Id: inboundID, Provider: "pspx", ProviderEventId: "evt_<1>", Type: "invoice.paid",
		Test: true, Outcome: "failed", Attempts: 2, LastError: "billing unavailable", ReceivedAt: "2026-11-26T09:00:00Z"}}}, nil
}

func (f *fake) ReplayEvents(ctx context.Context, in *webhookv1.ReplayEventsRequest, _ ...grpc.CallOption) (*webhookv1.ReplayResult, error) {
	if err := f.record(ctx, "ReplayEvents", in); err != nil {
		return nil, err
	}
	return &webhookv1.ReplayResult{Replayed: 1, Applied: 1}, nil
}
