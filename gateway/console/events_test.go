package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/locale"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

func signedInBrowser(t *testing.T) (*fake, *browser) {
	t.Helper()
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	return f, b
}

func TestRegisteringAnEndpointShowsItsSecretOnceWithACopyButton(t *testing.T) {
	f, b := signedInBrowser(t)
	rec := b.post(frame{}.EventsURL(testApp), url.Values{"action": {"create"}, "url": {"https://hooks.example/in"},
		"events": {"user.created, tenant.updated"}, "description": {"the shop's receiver"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<code id="new-secret">whsec_created_shown_once</code>`) ||
		!strings.Contains(rec.Body.String(), `data-copy="new-secret"`) {
		t.Fatalf("register = %d:\n%s", rec.Code, rec.Body)
	}
	in := f.received("CreateWebhookEndpoint")[0]
	req := in.req.(*outboundv1.CreateWebhookEndpointRequest)
	if in.bearer != "Bearer operator-token-1" || req.GetAppId() != testApp || req.GetEndpoint().GetUrl() != "https://hooks.example/in" ||
		!slices.Equal(req.GetEndpoint().GetEvents(), []string{"user.created", "tenant.updated"}) || req.GetEndpoint().GetDescription() != "the shop's receiver" {
		t.Errorf("CreateWebhookEndpoint = %+v", in)
	}
	if again := b.get(frame{}.EventsURL(testApp)); again.Code != http.StatusOK || strings.Contains(again.Body.String(), "whsec_") {
		t.Errorf("the events page again = %d, shows a secret: %v", again.Code, strings.Contains(again.Body.String(), "whsec_"))
	}
}

func TestTheEventsPagesShowEndpointsAndEachDeliverysAttempts(t *testing.T) {
	_, b := signedInBrowser(t)
	list := b.get(frame{}.EventsURL(testApp)).Body.String()
	for _, want := range []string{`href="/console/apps/` + testApp + `/events/` + endpointID + `"`, "https://hooks.example/berth?x=&lt;y&gt;",
		"<code>user.created</code> <code>user.updated</code>", "the shop&#39;s receiver"} {
		if !strings.Contains(list, want) {
			t.Errorf("the events page lacks %q:\n%s", want, list)
		}
	}
	rec := b.get(frame{}.EndpointURL(testApp, endpointID))
	page := rec.Body.String()
	for _, want := range []string{"<strong>500</strong>", "connection refused", "&lt;b&gt;receiver down&lt;/b&gt;", ">Failed<",
		`name="delivery" value="` + deliveryID + `"`, `type="datetime-local"`, `value="2026-11-26T12:00"`, `id="delete-confirm"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the endpoint page lacks %q:\n%s", want, page)
		}
	}
	if rec.Code != http.StatusOK || strings.Contains(page, "whsec_") || strings.Contains(page, "console.delivery.") {
		t.Errorf("endpoint page = %d, with a secret or an untranslated key", rec.Code)
	}
}

func TestEveryDeliveryStatusAndIngestOutcomeHasATextInBothLanguages(t *testing.T) {
	keys := []string{"console.delivery.pending", "console.delivery.succeeded", "console.delivery.failed"}
	for _, o := range []string{"received", "applied", "ignored", "rejected", "failed"} {
		keys = append(keys, "console.outcome."+o)
	}
	for _, key := range keys {
		for _, lang := range []string{"en", "de"} {
			if !locale.Has(key) || locale.For(lang).T(key) == key {
				t.Errorf("%s has no %s text", key, lang)
			}
		}
	}
}

func TestTheEventsPageListsTheAppsProviderCallsAndReplaysOne(t *testing.T) {
	f, b := signedInBrowser(t)
	page := b.get(frame{}.EventsURL(testApp)).Body.String()
	for _, want := range []string{"evt_&lt;1&gt;", "<code>invoice.paid</code>", "Failed · attempts: 2", "billing unavailable", "(test)",
		`name="event" value="` + inboundID + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the events page lacks %q:\n%s", want, page)
		}
	}
	if in := f.received("ListEvents"); len(in) != 1 || in[0].bearer != "Bearer operator-token-1" ||
		in[0].req.(*webhookv1.ListEventsRequest).GetAppId() != testApp || in[0].req.(*webhookv1.ListEventsRequest).GetLimit() != inboundShown {
		t.Errorf("ListEvents = %+v", in)
	}
	rec := b.post(frame{}.EventsURL(testApp), url.Values{"action": {"replay"}, "event": {inboundID}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != (frame{}).EventsURL(testApp)+"?notice=replayed" {
		t.Fatalf("replay = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	in := f.received("ReplayEvents")
	if len(in) != 1 {
		t.Fatalf("ReplayEvents called %d times", len(in))
	}
	if req := in[0].req.(*webhookv1.ReplayEventsRequest); in[0].bearer != "Bearer operator-token-1" || req.GetAppId() != testApp ||
		req.GetId() != inboundID || req.GetConnectionId() != "" {
		t.Errorf("ReplayEvents = %+v", in)
	}
	if rec := b.post(frame{}.EventsURL(testApp), url.Values{"action": {"replay"}, "event": {"evt_1"}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "(event)") || len(f.received("ReplayEvents")) != 1 {
		t.Errorf("a replay naming no stored call = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestEachEndpointActionCallsOutboundForThePathsEndpoint(t *testing.T) {
	page := frame{}.EndpointURL(testApp, endpointID)
	for _, tc := range []struct {
		form   url.Values
		method string
		check  func(req any) bool
		target string // the redirect; "" for a page answered at once
	}{
		{url.Values{"action": {"update"}, "url": {"https://hooks.example/v2"}, "events": {"*"}, "description": {""}}, "UpdateWebhookEndpoint",
			func(r any) bool {
				p := r.(*outboundv1.UpdateWebhookEndpointRequest).GetPatch()
				return p.GetUrl() == "https://hooks.example/v2" && slices.Equal(p.GetEvents(), []string{"*"}) && p.Description != nil && p.Disabled == nil
			}, page + "?notice=saved"},
		{url.Values{"action": {"disable"}, "confirm": {"yes"}}, "UpdateWebhookEndpoint",
			func(r any) bool {
				p := r.(*outboundv1.UpdateWebhookEndpointRequest).GetPatch()
				return p.Disabled != nil && p.GetDisabled() && p.Url == nil
			}, page + "?notice=saved"},
		{url.Values{"action": {"enable"}}, "UpdateWebhookEndpoint",
			func(r any) bool {
				p := r.(*outboundv1.UpdateWebhookEndpointRequest).GetPatch()
				return p.Disabled != nil && !p.GetDisabled()
			},
			page + "?notice=saved"},
		{url.Values{"action": {"retry"}, "delivery": {deliveryID}}, "RetryWebhookDelivery",
			func(r any) bool { return r.(*outboundv1.RetryWebhookDeliveryRequest).GetDeliveryId() == deliveryID }, page + "?notice=retried"},
		{url.Values{"action": {"recover"}, "since": {"2026-11-26T09:30"}}, "RecoverWebhookDeliveries",
			func(r any) bool {
				return r.(*outboundv1.RecoverWebhookDeliveriesRequest).GetRecovery().GetSince() == "2026-11-26T09:30:00Z"
			}, page + "?notice=recovered"},
		{url.Values{"action": {"delete"}, "confirm": {"yes"}}, "DeleteWebhookEndpoint",
			func(any) bool { return true }, frame{}.EventsURL(testApp) + "?notice=deleted"},
		{url.Values{"action": {"rotate"}, "confirm": {"yes"}}, "RotateWebhookEndpointSecret", func(any) bool { return true }, ""},
	} {
		f, b := signedInBrowser(t)
		rec := b.post(page, tc.form)
		calls := f.received(tc.method)
		if len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" || !tc.check(calls[0].req) {
			t.Errorf("%s: %s = %+v", tc.form.Get("action"), tc.method, calls)
			continue
		}
		ids := calls[0].req.(interface {
			GetAppId() string
			GetEndpointId() string
		})
		if ids.GetAppId() != testApp || ids.GetEndpointId() != endpointID {
			t.Errorf("%s acted on %s/%s", tc.form.Get("action"), ids.GetAppId(), ids.GetEndpointId())
		}
		switch {
		case tc.target == "":
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<code id="new-secret">whsec_rotated_shown_once</code>`) {
				t.Errorf("%s = %d without the new secret:\n%s", tc.form.Get("action"), rec.Code, rec.Body)
			}
		case rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.target:
			t.Errorf("%s = %d %q, want %q", tc.form.Get("action"), rec.Code, rec.Header().Get("Location"), tc.target)
		}
	}
}

func TestBadEventsFormsAreRefusedNamingTheFieldBeforeOutboundIsAsked(t *testing.T) {
	eventsPage, page := frame{}.EventsURL(testApp), frame{}.EndpointURL(testApp, endpointID)
	create := func(k, v string) url.Values {
		f := url.Values{"action": {"create"}, "url": {"https://hooks.example/in"}, "events": {"user.created"}}
		f.Set(k, v)
		return f
	}
	for _, tc := range []struct {
		name, target string
		form         url.Values
		field        string
	}{
		{"no URL", eventsPage, create("url", ""), "url"},
		{"not a web URL", eventsPage, create("url", "ftp://hooks.example/in"), "url"},
		{"a relative URL", eventsPage, create("url", "/hooks"), "url"},
		{"no event type", eventsPage, create("events", " , "), "events"},
		{"a type that is no name", eventsPage, create("events", "User.Created"), "events"},
		{"a type without its action", eventsPage, create("events", "user"), "events"},
		{"too many types", eventsPage, create("events", strings.Repeat("user.created ", 65)), "events"},
		{"a control character", eventsPage, create("description", "a\x00b"), "description"},
		{"an unknown action", eventsPage, url.Values{"action": {"drop"}}, "action"},
		{"no delivery", page, url.Values{"action": {"retry"}, "delivery": {"42"}}, "delivery"},
		{"no time", page, url.Values{"action": {"recover"}, "since": {"yesterday"}}, "since"},
		{"a delete without confirmation", page, url.Values{"action": {"delete"}}, "confirm"},
		{"a rotation without confirmation", page, url.Values{"action": {"rotate"}}, "confirm"},
		{"a disable without confirmation", page, url.Values{"action": {"disable"}}, "confirm"},
		{"an endpoint that is no id", frame{}.EndpointURL(testApp, "x"), url.Values{"action": {"enable"}}, "endpoint"},
	} {
		f, b := signedInBrowser(t)
		rec := b.post(tc.target, tc.form)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "("+tc.field+")") {
			t.Errorf("%s = %d, want 400 naming %s:\n%s", tc.name, rec.Code, tc.field, rec.Body)
		}
		for _, m := range []string{"CreateWebhookEndpoint", "UpdateWebhookEndpoint", "DeleteWebhookEndpoint", "RotateWebhookEndpointSecret", "RetryWebhookDelivery", "RecoverWebhookDeliveries"} {
			if len(f.received(m)) != 0 {
				t.Errorf("%s reached outbound's %s", tc.name, m)
			}
		}
	}
}

func TestOutboundsRefusalsBecomeMessagesOnTheEventsPages(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		err          error
		status       int
		field        string
	}{
		{"ListWebhookEndpoints", frame{}.EventsURL(testApp), status.Error(codes.PermissionDenied, "another project"), http.StatusForbidden, ""},
		{"ListEvents", frame{}.EventsURL(testApp), status.Error(codes.Unavailable, "billing down"), http.StatusServiceUnavailable, ""},
		{"GetWebhookEndpoint", frame{}.EndpointURL(testApp, endpointID), status.Error(codes.NotFound, "no endpoint"), http.StatusNotFound, ""},
		{"ListWebhookDeliveries", frame{}.EndpointURL(testApp, endpointID), status.Error(codes.Unavailable, "down"), http.StatusServiceUnavailable, ""},
	} {
		f, b := signedInBrowser(t)
		f.errs[tc.method] = tc.err
		if rec := b.get(tc.path); rec.Code != tc.status || !strings.Contains(rec.Body.String(), `id="problem"`) {
			t.Errorf("%s refused %v: %d, want %d on the problem page", tc.method, tc.err, rec.Code, tc.status)
		}
	}
	// A URL outbound refuses (a private address in production) comes back naming its field.
	f, b := signedInBrowser(t)
	f.errs["CreateWebhookEndpoint"] = status.Error(codes.InvalidArgument, "url must be an https URL")
	rec := b.post(frame{}.EventsURL(testApp), url.Values{"action": {"create"}, "url": {"http://10.0.0.1/in"}, "events": {"*"}})
	if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "whsec_") {
		t.Errorf("a refused registration = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestTheAppPageLinksToItsEvents(t *testing.T) {
	_, b := signedInBrowser(t)
	if body := b.get(frame{}.AppURL(testApp)).Body.String(); !strings.Contains(body, `href="/console/apps/`+testApp+`/events" id="events-link"`) {
		t.Errorf("the app page does not link its events page:\n%s", body)
	}
}
