package console

import (
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Limits of the events page's fields; outbound checks every value again (the known event types,
// the URL policy of the deployment).
const (
	maxEndpointURL   = 2048
	maxEndpointDescr = 1000 // characters
	maxEventTypes    = 64
)

// eventType is the shape of an event type name (resource.action) or the wildcard; outbound
// decides which names exist.
var eventType = regexp.MustCompile(`^(\*|[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63})$`)

// sinceLayout is the datetime-local input's value, read as UTC.
const sinceLayout = "2006-01-02T15:04"

// The events page's actions.
const (
	endpointCreate  = "create"
	endpointUpdate  = "update"
	endpointEnable  = "enable"
	endpointDisable = "disable"
	endpointRotate  = "rotate"
	endpointDelete  = "delete"
	deliveryRetry   = "retry"
	deliveryRecover = "recover"
	inboundReplay   = "replay"
)

// endpointFields are what the register and edit forms send.
type endpointFields struct {
	URL         string
	Events      []string
	Description string
}

// endpointForm is a posted action of the events pages.
type endpointForm struct {
	Action string
	endpointFields
	DeliveryID string // retry
	Since      string // recover: RFC 3339 UTC
	EventID    string // replay
}

// eventsFrom reads a form of the app's events page: registering an endpoint, or replaying a
// received provider call.
func eventsFrom(v url.Values) (endpointForm, error) {
	a, err := oneOf(v, "action", endpointCreate, inboundReplay)
	if err != nil {
		return endpointForm{}, err
	}
	f := endpointForm{Action: a}
	if a == inboundReplay {
		f.EventID, err = id(v, "event")
	} else {
		f.endpointFields, err = endpointFieldsFrom(v)
	}
	if err != nil {
		return endpointForm{}, err
	}
	return f, nil
}

// endpointFrom reads a form of an endpoint's page. Disabling, rotating the secret and deleting
// need their confirmation.
func endpointFrom(v url.Values) (endpointForm, error) {
	a, err := oneOf(v, "action", endpointUpdate, endpointEnable, endpointDisable, endpointRotate, endpointDelete, deliveryRetry, deliveryRecover)
	if err != nil {
		return endpointForm{}, err
	}
	f := endpointForm{Action: a}
	switch a {
	case endpointUpdate:
		f.endpointFields, err = endpointFieldsFrom(v)
	case endpointDisable, endpointRotate, endpointDelete:
		err = confirmed(v)
	case deliveryRetry:
		f.DeliveryID, err = id(v, "delivery")
	case deliveryRecover:
		f.Since, err = since(v, "since")
	}
	if err != nil {
		return endpointForm{}, err
	}
	return f, nil
}

// endpointFieldsFrom reads the URL, the event types (separated by spaces or commas) and the
// description.
func endpointFieldsFrom(v url.Values) (endpointFields, error) {
	u, err := textField(v, "url", maxEndpointURL, true)
	if err != nil {
		return endpointFields{}, err
	}
	if p, perr := url.Parse(u); perr != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return endpointFields{}, errField{"url"}
	}
	raw, err := textField(v, "events", maxEventTypes*130, true)
	if err != nil {
		return endpointFields{}, err
	}
	types := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' })
	if len(types) == 0 || len(types) > maxEventTypes {
		return endpointFields{}, errField{"events"}
	}
	for _, t := range types {
		if !eventType.MatchString(t) {
			return endpointFields{}, errField{"events"}
		}
	}
	d, err := textField(v, "description", maxEndpointDescr, false)
	if err != nil {
		return endpointFields{}, err
	}
	return endpointFields{URL: u, Events: types, Description: d}, nil
}

// since reads a datetime-local value as UTC and answers it in RFC 3339.
func since(v url.Values, key string) (string, error) {
	t, err := time.Parse(sinceLayout, strings.TrimSpace(v.Get(key)))
	if err != nil {
		return "", errField{key}
	}
	return t.UTC().Format(time.RFC3339), nil
}
