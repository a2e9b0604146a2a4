package console

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/locale"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// The events pages: an app's webhook endpoints, and one endpoint with its deliveries.
const (
	EventsPath   = Path + "/apps/{app}/events"
	EndpointPath = Path + "/apps/{app}/events/{endpoint}"
)

// EventsURL and EndpointURL are the events pages' links.
func (frame) EventsURL(appID string) string { return Path + "/apps/" + appID + "/events" }
func (frame) EndpointURL(appID, endpointID string) string {
	return Path + "/apps/" + appID + "/events/" + endpointID
}

// Excerpt is the start of a receiver's answer as the deliveries table shows it: the full answer
// (64 KiB at most) would bury the table.
func (frame) Excerpt(s string) string {
	const limit = 300
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}

// eventsView is an app's webhook endpoints, with the one just registered and its secret (shown
// once), and the provider calls received for the app.
type eventsView struct {
	frame
	App       *identityv1.App
	Endpoints []*outboundv1.WebhookEndpoint
	Created   *outboundv1.WebhookEndpoint
	Inbound   []*webhookv1.Event
}

// inboundShown is how many of the newest received provider calls the events page lists.
const inboundShown = 50

// endpointView is one endpoint with its newest deliveries; Secret is a secret just rotated
// (shown once), Since the recover form's default (a day ago, UTC).
type endpointView struct {
	frame
	App        *identityv1.App
	Endpoint   *outboundv1.WebhookEndpoint
	Deliveries []*outboundv1.WebhookDelivery
	Secret     string
	Since      string
}

// endpointIDs are the path's app and endpoint ids, checked.
func endpointIDs(r *http.Request) (string, string, error) {
	app, err := appID(r)
	if err != nil {
		return "", "", err
	}
	endpoint, err := id(map[string][]string{"endpoint": {r.PathValue("endpoint")}}, "endpoint")
	return app, endpoint, err
}

// events lists the app's webhook endpoints (never their secrets).
func (c *Console) events(w http.ResponseWriter, r *http.Request, v visit) {
	c.showEvents(w, r, v, nil)
}

// showEvents renders the events page, with created's secret when an endpoint was just registered.
func (c *Console) showEvents(w http.ResponseWriter, r *http.Request, v visit, created *outboundv1.WebhookEndpoint) {
	app, ok := c.pathApp(w, r, v)
	if !ok {
		return
	}
	id := app.GetId()
	list, err := c.Outbound.ListWebhookEndpoints(v.ctx, &outboundv1.ListWebhookEndpointsRequest{AppId: id})
	if err != nil {
		c.fail(w, r, v, err, "list the app's webhook endpoints")
		return
	}
	inbound, err := c.Webhooks.ListEvents(v.ctx, &webhookv1.ListEventsRequest{AppId: id, Limit: inboundShown})
	if err != nil {
		c.fail(w, r, v, err, "list the app's received provider calls")
		return
	}
	c.render(w, r, http.StatusOK, "events", eventsView{frame: c.frame(w, r, v.p, v.member, "console.events.title"),
		App: app, Endpoints: list.GetItems(), Created: created, Inbound: inbound.GetEvents()})
}

// changeEvents registers an endpoint (its secret shown once, on this answer only) or replays a
// received provider call.
func (c *Console) changeEvents(w http.ResponseWriter, r *http.Request, v visit) {
	id, in, ok := posted(c, w, r, &v, appID, eventsFrom)
	if !ok {
		return
	}
	if in.Action == inboundReplay {
		if _, err := c.Webhooks.ReplayEvents(v.ctx, &webhookv1.ReplayEventsRequest{AppId: id, Id: in.EventID}); err != nil {
			c.fail(w, r, v, err, "replay a provider call")
			return
		}
		back(w, r, frame{}.EventsURL(id), "replayed")
		return
	}
	created, err := c.Outbound.CreateWebhookEndpoint(v.ctx, &outboundv1.CreateWebhookEndpointRequest{AppId: id,
		Endpoint: &outboundv1.EndpointInput{Url: in.URL, Events: in.Events, Description: in.Description}})
	if err != nil {
		c.fail(w, r, v, err, "register a webhook endpoint")
		return
	}
	c.showEvents(w, r, v, created)
}

// endpoint shows an endpoint with its newest deliveries and their attempts.
func (c *Console) endpoint(w http.ResponseWriter, r *http.Request, v visit) {
	c.showEndpoint(w, r, v, "")
}

// showEndpoint renders an endpoint's page, with secret when it was just rotated.
func (c *Console) showEndpoint(w http.ResponseWriter, r *http.Request, v visit, secret string) {
	appID, endpointID, err := endpointIDs(r)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	app, ok := c.readApp(w, r, v, appID)
	if !ok {
		return
	}
	ep, err := c.Outbound.GetWebhookEndpoint(v.ctx, &outboundv1.GetWebhookEndpointRequest{AppId: appID, EndpointId: endpointID})
	if err != nil {
		c.fail(w, r, v, err, "read a webhook endpoint")
		return
	}
	deliveries, err := c.Outbound.ListWebhookDeliveries(v.ctx, &outboundv1.ListWebhookDeliveriesRequest{AppId: appID, EndpointId: endpointID})
	if err != nil {
		c.fail(w, r, v, err, "list a webhook endpoint's deliveries")
		return
	}
	c.render(w, r, http.StatusOK, "endpoint", endpointView{frame: c.frame(w, r, v.p, v.member, "console.endpoint.title"),
		App: app, Endpoint: ep, Deliveries: deliveries.GetItems(), Secret: secret,
		Since: c.sessions.now().UTC().Add(-24 * time.Hour).Format(sinceLayout)})
}

// changeEndpoint applies one posted action of an endpoint's page through outbound.
func (c *Console) changeEndpoint(w http.ResponseWriter, r *http.Request, v visit) {
	appID, endpointID, err := endpointIDs(r)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	form, ok := c.readForm(w, r, v.p, &v)
	if !ok {
		return
	}
	in, err := endpointFrom(form)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	target, notice := frame{}.EndpointURL(appID, endpointID), "saved"
	switch in.Action {
	case endpointUpdate:
		_, err = c.Outbound.UpdateWebhookEndpoint(v.ctx, &outboundv1.UpdateWebhookEndpointRequest{AppId: appID, EndpointId: endpointID,
			Patch: &outboundv1.EndpointPatch{Url: &in.URL, Events: in.Events, Description: &in.Description}})
	case endpointEnable, endpointDisable:
		disabled := in.Action == endpointDisable
		_, err = c.Outbound.UpdateWebhookEndpoint(v.ctx, &outboundv1.UpdateWebhookEndpointRequest{AppId: appID, EndpointId: endpointID,
			Patch: &outboundv1.EndpointPatch{Disabled: &disabled}})
	case endpointRotate:
		rotated, err := c.Outbound.RotateWebhookEndpointSecret(v.ctx, &outboundv1.RotateWebhookEndpointSecretRequest{AppId: appID, EndpointId: endpointID})
		if err != nil {
			c.fail(w, r, v, err, "rotate a webhook endpoint's secret")
			return
		}
		c.showEndpoint(w, r, v, rotated.GetSecret())
		return
	case endpointDelete:
		_, err = c.Outbound.DeleteWebhookEndpoint(v.ctx, &outboundv1.DeleteWebhookEndpointRequest{AppId: appID, EndpointId: endpointID})
		target, notice = frame{}.EventsURL(appID), "deleted"
	case deliveryRetry:
		_, err = c.Outbound.RetryWebhookDelivery(v.ctx, &outboundv1.RetryWebhookDeliveryRequest{AppId: appID, EndpointId: endpointID, DeliveryId: in.DeliveryID})
		notice = "retried"
	case deliveryRecover:
		_, err = c.Outbound.RecoverWebhookDeliveries(v.ctx, &outboundv1.RecoverWebhookDeliveriesRequest{AppId: appID, EndpointId: endpointID,
			Recovery: &outboundv1.RecoveryInput{Since: in.Since}})
		notice = "recovered"
	}
	if err != nil {
		c.fail(w, r, v, err, "change a webhook endpoint ("+in.Action+")")
		return
	}
	back(w, r, target, notice)
}

// secretOnce is a secret shown once with its copy button.
type secretOnce struct{ Secret, Copy, Copied string }

// SecretOnce is what the template "secretOnce" shows of secret.
func (f frame) SecretOnce(secret string) secretOnce {
	return secretOnce{Secret: secret, Copy: f.T("console.keys.copy"), Copied: f.T("console.keys.copied")}
}

// endpointFieldsView is the register and edit forms' fields, prefilled from an endpoint (nil for
// none); Suffix keeps the two forms' ids apart.
type endpointFieldsView struct {
	locale.Printer
	Suffix, URL, Events, Description string
}

// EndpointFields is what the template "endpointFields" shows.
func (f frame) EndpointFields(suffix string, ep *outboundv1.WebhookEndpoint) endpointFieldsView {
	return endpointFieldsView{Printer: f.Printer, Suffix: suffix, URL: ep.GetUrl(), Events: strings.Join(ep.GetEvents(), " "), Description: ep.GetDescription()}
}
