package convert

import (
	"time"

	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Endpoint renders an endpoint (kind "webhookEndpoint"); secret is "" except in the answers of
// the create and rotate routes, and an empty one leaves the field out of the answer.
func Endpoint(e domain.Endpoint, secret string) *outboundv1.WebhookEndpoint {
	out := &outboundv1.WebhookEndpoint{
		Kind: "webhookEndpoint", Id: e.ID, Url: e.URL, Events: e.Events, Description: e.Description,
		Disabled: e.Disabled, CreatedAt: stamp(e.CreatedAt), UpdatedAt: stamp(e.UpdatedAt),
	}
	if secret != "" {
		out.Secret = &secret
	}
	return out
}

// EndpointList renders the list route's data.
func EndpointList(es []domain.Endpoint) *outboundv1.WebhookEndpointList {
	out := &outboundv1.WebhookEndpointList{Kind: "webhookEndpoint", ItemsLength: int32(len(es)), Items: make([]*outboundv1.WebhookEndpoint, 0, len(es))}
	for _, e := range es {
		out.Items = append(out.Items, Endpoint(e, ""))
	}
	return out
}

// Delivery renders a delivery with its attempts (kind "webhookDelivery").
func Delivery(v app.DeliveryView) *outboundv1.WebhookDelivery {
	d := v.Delivery
	out := &outboundv1.WebhookDelivery{Kind: "webhookDelivery", Id: d.ID, EndpointId: d.EndpointID, Type: d.Type,
		Status: d.Status, CreatedAt: stamp(d.CreatedAt), Attempts: make([]*outboundv1.WebhookAttempt, 0, len(v.Attempts))}
	if d.Status == domain.StatusPending {
		out.NextAttemptAt = stamp(d.NextAttemptAt)
	}
	for _, a := range v.Attempts {
		out.Attempts = append(out.Attempts, &outboundv1.WebhookAttempt{At: stamp(a.At), Status: int32(a.Status),
			Response: a.Response, Error: a.Error, DurationMs: int32(a.Duration.Milliseconds())})
	}
	return out
}

// DeliveryList renders the deliveries route's data.
func DeliveryList(vs []app.DeliveryView) *outboundv1.WebhookDeliveryList {
	out := &outboundv1.WebhookDeliveryList{Kind: "webhookDelivery", ItemsLength: int32(len(vs)), Items: make([]*outboundv1.WebhookDelivery, 0, len(vs))}
	for _, v := range vs {
		out.Items = append(out.Items, Delivery(v))
	}
	return out
}

// EndpointInput is the create route's body as the use case takes it.
func EndpointInput(in *outboundv1.EndpointInput) app.EndpointInput {
	return app.EndpointInput{URL: in.GetUrl(), Events: in.GetEvents(), Description: in.GetDescription()}
}

// EndpointPatch is the update route's body as the use case takes it.
func EndpointPatch(p *outboundv1.EndpointPatch) app.EndpointPatch {
	return app.EndpointPatch{URL: p.Url, Events: p.GetEvents(), Description: p.Description, Disabled: p.Disabled}
}

// Recovery renders the recover route's data (kind "webhookRecovery").
func Recovery(r app.Recovery) *outboundv1.WebhookRecovery {
	return &outboundv1.WebhookRecovery{Kind: "webhookRecovery", Since: stamp(r.Since), Deliveries: int32(r.Deliveries)}
}
