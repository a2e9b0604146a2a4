package pspx

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/berthhq/berth/services/sandbox/delivery"
)

// maxEndpoints is the provider's limit of webhook endpoints per account.
const maxEndpoints = 16

// maxRollExpiry bounds how long a rolled secret keeps signing: a day, as the provider's dashboard.
const maxRollExpiry = 24 * time.Hour

// userAgent is what the provider's webhook requests say they are.
const userAgent = "Pspx/1.0 (+https://docs.pspx.example/webhooks)"

// eventTypeFormat is an event type such as invoice.created. Types are not checked against the
// ones the sandbox emits: an endpoint may well ask for events only the real provider sends.
var eventTypeFormat = regexp.MustCompile(`^[a-z][a-z_]*(\.[a-z_]+)+$`)

type webhookEndpoint struct {
	id, url, description string
	seq                  int64
	created              time.Time
	events               []string // event types, or "*" for all
	metadata             map[string]string
	disabled             bool
	secrets              *signer
}

// wants reports whether the endpoint receives events of type typ.
func (ep *webhookEndpoint) wants(typ string) bool {
	return !ep.disabled && (slices.Contains(ep.events, "*") || slices.Contains(ep.events, typ))
}

// signer holds an endpoint's signing secrets, newest first. It has a lock of its own because the
// delivery workers sign every attempt when it is sent, without the server's lock.
type signer struct {
	mu      sync.Mutex
	secrets []secret
}

type secret struct {
	value   string
	expires time.Time // real time after which it no longer signs; zero for the current secret
}

func newSecret() string { return "whsec_" + newID("", 32) }

// roll makes a new secret current; the older ones keep signing until expiresIn (real time) has
// passed, or until their own earlier expiry.
func (g *signer) roll(now time.Time, expiresIn time.Duration) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	until := now.Add(expiresIn)
	kept := []secret{{value: newSecret()}}
	for _, s := range g.secrets {
		if s.expires.IsZero() || s.expires.After(until) {
			s.expires = until
		}
		if s.expires.After(now) {
			kept = append(kept, s)
		}
	}
	g.secrets = kept
	return kept[0].value
}

// header signs body at now with every secret still valid then: pspx-signature carries the time
// and one v1 per secret, the newest first, so a receiver that knows either secret accepts it.
func (g *signer) header(now time.Time, body []byte) http.Header {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := strconv.FormatInt(now.Unix(), 10)
	sig := "t=" + t
	for _, s := range g.secrets {
		if !s.expires.IsZero() && !s.expires.After(now) {
			continue
		}
		mac := hmac.New(sha256.New, []byte(s.value))
		mac.Write([]byte(t + "."))
		mac.Write(body)
		sig += ",v1=" + hex.EncodeToString(mac.Sum(nil))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("User-Agent", userAgent)
	h.Set("Pspx-Signature", sig)
	return h
}

// outgoing is an event delivery waiting for the end of the request (or clock work) that caused
// it, so deliveries caused together are enqueued together. inv is the renewal draft whose
// invoice.created this is, which waits for the receivers' answers before it is finalized.
type outgoing struct {
	job      delivery.Job
	endpoint string
	inv      *invoice
}

// invoiceHook is one delivery of a renewal draft's invoice.created.
type invoiceHook struct{ endpoint, delivery string }

// deliver queues an event for every endpoint of the account that wants it. The caller holds s.mu.
func (s *Server) deliver(a *account, e *event) {
	if s.deliveries == nil {
		return
	}
	mode := map[bool]string{false: "test", true: "live"}[a.live]
	for _, ep := range a.endpointsInOrder() {
		if !ep.wants(e.typ) {
			continue
		}
		body, g := e.body, ep.secrets
		s.outbox = append(s.outbox, outgoing{endpoint: ep.id, job: delivery.Job{
			Provider: delivery.Pspx, Mode: mode, EventID: e.id, Type: e.typ, URL: ep.url, Body: body, Lane: ep.id,
			Header: func(now time.Time) http.Header { return g.header(now, body) },
		}})
	}
}

// awaitedBy marks the deliveries of event id still in the outbox as the ones inv waits for.
func (s *Server) awaitedBy(id string, inv *invoice) {
	for i := range s.outbox {
		if s.outbox[i].job.EventID == id {
			s.outbox[i].inv = inv
		}
	}
}

// flush hands the outbox to the delivery queue. The caller holds s.mu.
func (s *Server) flush() {
	if len(s.outbox) == 0 {
		return
	}
	jobs := make([]delivery.Job, len(s.outbox))
	for i, o := range s.outbox {
		jobs[i] = o.job
	}
	for i, id := range s.deliveries.Enqueue(jobs...) {
		if o := s.outbox[i]; o.inv != nil {
			o.inv.hooks = append(o.inv.hooks, invoiceHook{endpoint: o.endpoint, delivery: id})
		}
	}
	s.outbox = nil
}

func (a *account) endpointsInOrder() []*webhookEndpoint {
	out := make([]*webhookEndpoint, 0, len(a.endpoints))
	for _, ep := range a.endpoints {
		out = append(out, ep)
	}
	slices.SortFunc(out, func(x, y *webhookEndpoint) int { return int(x.seq - y.seq) })
	return out
}

type webhookEndpointJSON struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	APIVersion    *string           `json:"api_version"`
	Created       int64             `json:"created"`
	Description   *string           `json:"description"`
	EnabledEvents []string          `json:"enabled_events"`
	Livemode      bool              `json:"livemode"`
	Metadata      map[string]string `json:"metadata"`
	Secret        string            `json:"secret,omitempty"` // only in the answer that creates the endpoint
	Status        string            `json:"status"`
	URL           string            `json:"url"`
}

func (a *account) renderEndpoint(ep *webhookEndpoint) webhookEndpointJSON {
	status := "enabled"
	if ep.disabled {
		status = "disabled"
	}
	return webhookEndpointJSON{
		ID: ep.id, Object: "webhook_endpoint", Created: unix(ep.created), Description: nullStr(ep.description),
		EnabledEvents: ep.events, Livemode: a.live, Metadata: meta(ep.metadata), Status: status, URL: ep.url,
	}
}

// endpointFields reads and checks the url and enabled_events[] of a create or update.
func (c *call) endpointFields() (u string, hasURL bool, events []string, hasEvents bool, err *apiError) {
	u, hasURL = c.p.str("url")
	list, hasEvents := c.p.list("enabled_events")
	if hasURL {
		if p, perr := url.Parse(u); perr != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return "", false, nil, false, errInvalid("url", "Invalid URL: %q. Webhook endpoints need an absolute http or https URL.", u)
		}
	}
	if hasEvents && len(list) == 0 {
		return "", false, nil, false, errInvalid("enabled_events", "enabled_events must list at least one event type, or '*' for all events.")
	}
	for i, typ := range list {
		if typ != "*" && !eventTypeFormat.MatchString(typ) {
			return "", false, nil, false, errInvalid("enabled_events["+strconv.Itoa(i)+"]", "Invalid event type: %q. Use an event type such as invoice.created, or '*' for all events.", typ)
		}
		if !slices.Contains(events, typ) {
			events = append(events, typ)
		}
	}
	return u, hasURL, events, hasEvents, nil
}

func (c *call) endpoint(id string) (*webhookEndpoint, *apiError) {
	if ep := c.a.endpoints[id]; ep != nil {
		return ep, nil
	}
	return nil, errNoSuch("webhook endpoint", id, "id")
}

func (s *Server) createWebhookEndpoint(c *call) (any, *apiError) {
	u, hasURL, events, hasEvents, err := c.endpointFields()
	description := c.p.text("description")
	metadata := applyMetadata(c, nil, "metadata")
	if perr := c.p.done(); perr != nil {
		return nil, perr
	}
	switch {
	case err != nil:
		return nil, err
	case !hasURL:
		return nil, errMissing("url")
	case !hasEvents:
		return nil, errMissing("enabled_events")
	case len(c.a.endpoints) >= maxEndpoints:
		return nil, errState("You have reached the maximum of %d webhook endpoints for this account.", maxEndpoints)
	}
	ep := &webhookEndpoint{
		id: newID("we_", 24), seq: c.s.nextSeq(), created: c.now, url: u, events: events, description: description,
		metadata: metadata, secrets: &signer{secrets: []secret{{value: newSecret()}}},
	}
	c.a.endpoints[ep.id] = ep
	out := c.a.renderEndpoint(ep)
	out.Secret = ep.secrets.secrets[0].value
	return out, nil
}

func (s *Server) getWebhookEndpoint(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	ep, err := c.endpoint(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return c.a.renderEndpoint(ep), nil
}

func (s *Server) listWebhookEndpoints(c *call) (any, *apiError) {
	all := slices.Clone(c.a.endpointsInOrder())
	slices.Reverse(all)
	page, more, err := pageOf(c, all, func(ep *webhookEndpoint) string { return ep.id }, "webhook endpoint")
	if perr := c.p.done(); perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, err
	}
	data := make([]webhookEndpointJSON, len(page))
	for i, ep := range page {
		data[i] = c.a.renderEndpoint(ep)
	}
	return listJSON{Object: "list", Data: data, HasMore: more, URL: "/v1/webhook_endpoints"}, nil
}

func (s *Server) updateWebhookEndpoint(c *call) (any, *apiError) {
	ep, err := c.endpoint(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	u, hasURL, events, hasEvents, ferr := c.endpointFields()
	disabled, hasDisabled := c.p.boolean("disabled")
	description, hasDescription := c.p.str("description")
	metadata := applyMetadata(c, maps.Clone(ep.metadata), "metadata")
	if perr := c.p.done(); perr != nil {
		return nil, perr
	}
	if ferr != nil {
		return nil, ferr
	}
	if hasURL {
		ep.url = u
	}
	if hasEvents {
		ep.events = events
	}
	if hasDisabled {
		ep.disabled = disabled
	}
	if hasDescription {
		ep.description = description
	}
	ep.metadata = metadata
	return c.a.renderEndpoint(ep), nil
}

func (s *Server) deleteWebhookEndpoint(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	ep, err := c.endpoint(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	delete(c.a.endpoints, ep.id)
	return struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{ep.id, "webhook_endpoint", true}, nil
}

// rollSecret is the sandbox's stand-in for the dashboard's "roll secret": POST
// /webhook_endpoints/{id}/roll with the account's key and {"expiresInSeconds": N}, 0 to 86400.
// The answer {"secret": ...} is the new secret; until N seconds of real time have passed,
// deliveries are signed with the old secret too.
func (s *Server) rollSecret(w http.ResponseWriter, r *http.Request) {
	key, _, aerr := authenticate(r)
	if aerr != nil {
		writeJSON(w, aerr.status, envelope{aerr})
		return
	}
	var body struct {
		ExpiresInSeconds *int64 `json:"expiresInSeconds"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		aerr = errInvalid("expiresInSeconds", "Invalid expiresInSeconds: must be a whole number of seconds from 0 to %d.", int(maxRollExpiry/time.Second))
	case err != nil:
		aerr = errInvalid("", `Invalid request: send a JSON object {"expiresInSeconds": N}.`)
	case body.ExpiresInSeconds == nil:
		aerr = errMissing("expiresInSeconds")
	case *body.ExpiresInSeconds < 0 || time.Duration(*body.ExpiresInSeconds)*time.Second > maxRollExpiry:
		aerr = errInvalid("expiresInSeconds", "Invalid expiresInSeconds: must be a whole number of seconds from 0 to %d.", int(maxRollExpiry/time.Second))
	}
	if aerr != nil {
		writeJSON(w, aerr.status, envelope{aerr})
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	var ep *webhookEndpoint
	if a := s.accounts[key]; a != nil {
		ep = a.endpoints[id]
	}
	s.mu.Unlock()
	if ep == nil {
		aerr = errNoSuch("webhook endpoint", id, "id")
		writeJSON(w, aerr.status, envelope{aerr})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"secret": ep.secrets.roll(time.Now(), time.Duration(*body.ExpiresInSeconds)*time.Second)})
}
