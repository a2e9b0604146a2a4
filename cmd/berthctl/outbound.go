package main

import (
	"context"
	"errors"
	"flag"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/cmd/berthctl/target"
	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// runOutbound runs the webhook-endpoint commands. Their routes are an app's, answered to its write
// API key (BERTH_API_KEY) as the REST routes are, not operators' admin calls.
func runOutbound(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	fs := inv.fs
	var (
		appID       = fs.String("app", "", "app id")
		endpoint    = fs.String("endpoint", "", "webhook endpoint id")
		delivery    = fs.String("delivery", "", "delivery id")
		url         = fs.String("url", "", "the receiver's URL (https)")
		description = fs.String("description", "", "free text for the app's operators")
		disabled    = fs.String("disabled", "", "true stops new deliveries, false resumes them")
		since       = fs.String("since", "", "recover failed deliveries created at or after (RFC 3339)")
		evs         multi
	)
	fs.Var(&evs, "event", "an event type (user.updated, ...) or * for all; repeatable")
	if err := inv.parse(); err != nil {
		return nil, err
	}
	key := strings.TrimSpace(config.OS(target.APIKeyVar))
	if key == "" {
		return nil, usageError{errors.New(target.APIKeyVar + " must hold a write API key of the app (berthctl key-create -type write)")}
	}
	ctx = metadata.AppendToOutgoingContext(ctx, authn.MDAPIKey, key, authn.MDAPIKeyType, "write", authn.MDClientID, *appID)
	c := outboundv1.NewOutboundServiceClient(conn)
	switch inv.cmd.name {
	case "webhook-endpoint-create":
		return c.CreateWebhookEndpoint(ctx, &outboundv1.CreateWebhookEndpointRequest{AppId: *appID,
			Endpoint: &outboundv1.EndpointInput{Url: *url, Events: evs, Description: *description}})
	case "webhook-endpoints":
		return c.ListWebhookEndpoints(ctx, &outboundv1.ListWebhookEndpointsRequest{AppId: *appID})
	case "webhook-endpoint-update":
		patch := &outboundv1.EndpointPatch{Events: evs}
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if given["url"] {
			patch.Url = url
		}
		if given["description"] {
			patch.Description = description
		}
		if *disabled != "" {
			d := *disabled == "true"
			patch.Disabled = &d
		}
		return c.UpdateWebhookEndpoint(ctx, &outboundv1.UpdateWebhookEndpointRequest{AppId: *appID, EndpointId: *endpoint, Patch: patch})
	case "webhook-endpoint-delete":
		return c.DeleteWebhookEndpoint(ctx, &outboundv1.DeleteWebhookEndpointRequest{AppId: *appID, EndpointId: *endpoint})
	case "webhook-endpoint-rotate":
		return c.RotateWebhookEndpointSecret(ctx, &outboundv1.RotateWebhookEndpointSecretRequest{AppId: *appID, EndpointId: *endpoint})
	case "webhook-recover":
		return c.RecoverWebhookDeliveries(ctx, &outboundv1.RecoverWebhookDeliveriesRequest{AppId: *appID, EndpointId: *endpoint,
			Recovery: &outboundv1.RecoveryInput{Since: *since}})
	case "webhook-deliveries":
		return c.ListWebhookDeliveries(ctx, &outboundv1.ListWebhookDeliveriesRequest{AppId: *appID, EndpointId: *endpoint})
	}
	return c.RetryWebhookDelivery(ctx, &outboundv1.RetryWebhookDeliveryRequest{AppId: *appID, EndpointId: *endpoint, DeliveryId: *delivery})
}
