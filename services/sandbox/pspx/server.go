package pspx

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/delivery"
	"github.com/berthhq/berth/services/sandbox/idempotency"
)

// apiVersion is the version the sandbox implements, answered when a request names none.
const apiVersion = "2024-06-20"

// maxBody bounds a request body, as the brief for every sandbox endpoint asks.
const maxBody = 1 << 20

var (
	keyFormat     = regexp.MustCompile(`^sk_(test|live)_[A-Za-z0-9]{8,247}$`)
	versionFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$`)
)

// Config configures a sandbox.
type Config struct {
	Clock   *clock.Clock // nil: a clock of its own at real time
	BaseURL string       // where the sandbox is reachable, for hosted page URLs; "" makes them root-relative
	Log     *slog.Logger // nil: discard
	// Deliveries sends every event to the account's webhook endpoints; nil records events only
	// (Events), and renewal drafts then finalize after their hour without waiting for anyone.
	Deliveries *delivery.Queue
	// DraftWait bounds how long (real time) a clock advance waits for the receivers to answer a
	// renewal draft's invoice.created before it moves on; 0 or more than 10 s means 10 s.
	DraftWait time.Duration
}

// maxDraftWait is the longest a clock advance waits for invoice.created to be answered.
const maxDraftWait = 10 * time.Second

// Server is the sandbox, an http.Handler serving the API under /v1/ and the hosted pages under
// /checkout/, relative to wherever it is mounted.
type Server struct {
	clock *clock.Clock
	base  string
	log   *slog.Logger
	mux   *http.ServeMux
	idem  idempotency.Store
	page  *template.Template

	deliveries *delivery.Queue
	draftWait  time.Duration
	// advancing lets one clock advance run at a time: an advance lets go of mu while it waits
	// for webhook answers, and a second one must not start on the same accounts meanwhile.
	advancing sync.Mutex

	mu       sync.Mutex
	accounts map[string]*account
	order    []*account          // accounts in creation order, so clock work is deterministic
	sessions map[string]*account // checkout session id → its account: the hosted page carries no key
	events   []Event
	seq      int64
	outbox   []outgoing // deliveries of the work in progress, enqueued when it ends
}

// New returns an empty sandbox and registers its renewals with the clock.
func New(cfg Config) *Server {
	s := &Server{
		clock: cfg.Clock, base: strings.TrimRight(cfg.BaseURL, "/"), log: cfg.Log,
		accounts: map[string]*account{}, sessions: map[string]*account{},
		page:       template.Must(template.New("checkout").Parse(checkoutHTML)),
		deliveries: cfg.Deliveries, draftWait: cfg.DraftWait,
	}
	if s.draftWait <= 0 || s.draftWait > maxDraftWait {
		s.draftWait = maxDraftWait
	}
	if s.clock == nil {
		s.clock = clock.New()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.routes()
	s.clock.OnAdvance(s.advance)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	m := http.NewServeMux()
	api := map[string]handler{
		"POST /v1/customers":                     s.createCustomer,
		"GET /v1/customers/{id}":                 s.getCustomer,
		"POST /v1/customers/{id}":                s.updateCustomer,
		"GET /v1/customers/{id}/payment_methods": s.listPaymentMethods,
		"POST /v1/payment_methods/{id}/detach":   s.detachPaymentMethod,
		"POST /v1/products":                      s.createProduct,
		"POST /v1/prices":                        s.createPrice,
		"GET /v1/prices/{id}":                    s.getPrice,
		"POST /v1/tax_rates":                     s.createTaxRate,
		"GET /v1/tax_rates/{id}":                 s.getTaxRate,
		"POST /v1/checkout/sessions":             s.createSession,
		"GET /v1/checkout/sessions/{id}":         s.getSession,
		"POST /v1/subscriptions":                 s.createSubscription,
		"GET /v1/subscriptions/{id}":             s.getSubscription,
		"POST /v1/subscriptions/{id}":            s.updateSubscription,
		"POST /v1/invoiceitems":                  s.createInvoiceItem,
		"POST /v1/invoices":                      s.createInvoice,
		"GET /v1/invoices":                       s.listInvoices,
		"GET /v1/invoices/{id}":                  s.getInvoice,
		"POST /v1/invoices/{id}/finalize":        s.finalizeInvoice,
		"POST /v1/invoices/{id}/pay":             s.payInvoice,
		"POST /v1/invoices/{id}/void":            s.voidInvoice,
		"GET /v1/payment_intents/{id}":           s.getPaymentIntent,
		"GET /v1/events":                         s.listEvents,
		"GET /v1/events/{id}":                    s.getEvent,
		"POST /v1/invoices/{id}/lines/{line_id}": s.updateInvoiceLine,
		"POST /v1/webhook_endpoints":             s.createWebhookEndpoint,
		"GET /v1/webhook_endpoints":              s.listWebhookEndpoints,
		"GET /v1/webhook_endpoints/{id}":         s.getWebhookEndpoint,
		"POST /v1/webhook_endpoints/{id}":        s.updateWebhookEndpoint,
		"DELETE /v1/webhook_endpoints/{id}":      s.deleteWebhookEndpoint,
		"/":                                      unrecognized,
	}
	for pattern, h := range api {
		m.Handle(pattern, s.api(h))
	}
	m.HandleFunc("GET /checkout/{id}", s.showCheckout)
	m.HandleFunc("POST /checkout/{id}", s.submitCheckout)
	m.HandleFunc("POST /webhook_endpoints/{id}/roll", s.rollSecret)
	s.mux = m
}

// call is one API request being answered, or one piece of clock work: the account, the time
// everything it does is dated, and what events record of the request that caused them.
type call struct {
	s       *Server
	a       *account
	now     time.Time
	p       *params
	r       *http.Request
	reqID   string
	idemKey string
}

type handler func(c *call) (any, *apiError)

func unrecognized(c *call) (any, *apiError) {
	return nil, invalidRequest(http.StatusNotFound, "", "", "Unrecognized request URL (%s: %s).", c.r.Method, c.r.URL.Path)
}

// api wraps an endpoint: authentication, version, parameters, idempotent replay, one lock.
func (s *Server) api(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqID := newID("req_", 14)
		w.Header().Set("Request-Id", reqID)
		key, live, aerr := authenticate(r)
		if aerr != nil {
			writeJSON(w, aerr.status, envelope{aerr})
			return
		}
		version := r.Header.Get("Pspx-Version")
		if version == "" {
			version = apiVersion
		} else if !versionFormat.MatchString(version) {
			writeJSON(w, http.StatusBadRequest, envelope{errInvalid("", "Invalid Pspx-Version: %q. Versions are dates like %s.", version, apiVersion)})
			return
		}
		w.Header().Set("Pspx-Version", version)
		raw, aerr := readParams(w, r)
		if aerr != nil {
			writeJSON(w, aerr.status, envelope{aerr})
			return
		}
		idemKey := ""
		if r.Method == http.MethodPost {
			idemKey = r.Header.Get("Idempotency-Key")
		}
		if len(idemKey) > 255 {
			writeJSON(w, http.StatusBadRequest, envelope{errInvalid("", "Idempotency keys can be at most 255 characters long.")})
			return
		}
		run := func() idempotency.Answer {
			p, perr := parseParams(raw)
			s.mu.Lock()
			defer s.mu.Unlock()
			defer s.flush() // the request's events go out together once it is done
			var body any
			status := http.StatusOK
			if perr == nil {
				c := &call{s: s, a: s.account(key, live), p: p, r: r, reqID: reqID, idemKey: idemKey}
				c.now = s.clock.Now()
				body, perr = h(c)
			}
			if perr != nil {
				status, body = perr.status, envelope{perr}
			}
			return idempotency.Answer{Status: status, Body: marshal(body)}
		}
		fingerprint := []byte(r.Method + " " + r.URL.Path + "\n" + canonical(raw))
		ans, outcome := s.idem.Run(key, idemKey, fingerprint, run)
		switch outcome {
		case idempotency.Mismatch:
			writeJSON(w, http.StatusBadRequest, envelope{&apiError{Type: "idempotency_error", Message: "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '" + idemKey + "' if you meant to execute a different request."}})
			return
		case idempotency.Replayed:
			w.Header().Set("Idempotent-Replayed", "true")
		}
		if idemKey != "" {
			w.Header().Set("Idempotency-Key", idemKey)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ans.Status)
		_, _ = w.Write(ans.Body)
	})
}

func authenticate(r *http.Request) (key string, live bool, _ *apiError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false, errAuth("You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').")
	}
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return "", false, errAuth("Invalid authorization header. Use Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').")
	}
	m := keyFormat.FindStringSubmatch(key)
	if m == nil {
		return "", false, errAuth("Invalid API Key provided: %s", mask(key))
	}
	return key, m[1] == "live", nil
}

// mask shows a key the way the provider echoes a wrong one: its start and its last four.
func mask(key string) string {
	if len(key) <= 12 {
		return strings.Repeat("*", len(key))
	}
	return key[:8] + strings.Repeat("*", len(key)-12) + key[len(key)-4:]
}

// readParams returns the form body of a POST or the query of any other request.
func readParams(w http.ResponseWriter, r *http.Request) (string, *apiError) {
	if r.Method != http.MethodPost {
		return r.URL.RawQuery, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return "", errInvalid("", "Request body too large: the limit is %d bytes.", maxBody)
		}
		return "", errInvalid("", "The request body could not be read.")
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
			return "", errInvalid("", "Invalid request: unsupported Content-Type %q. Send application/x-www-form-urlencoded.", r.Header.Get("Content-Type"))
		}
	}
	return string(body), nil
}

// marshal renders an answer the way the provider does, indented. Every value the sandbox
// answers with is plain data, which always marshals.
func marshal(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic("pspx sandbox: rendering an answer: " + err.Error())
	}
	return append(b, '\n')
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(v))
}

// account returns the account of a secret key, opening it on first use.
func (s *Server) account(key string, live bool) *account {
	a := s.accounts[key]
	if a == nil {
		a = newAccount(key, live, s.clock.Now())
		s.accounts[key] = a
		s.order = append(s.order, a)
	}
	return a
}

func (s *Server) nextSeq() int64 {
	s.seq++
	return s.seq
}

// emit records an event about obj (rendered now), with the attributes prev had that obj no
// longer has when prev is given (the provider's data.previous_attributes), queues it for the
// account's webhook endpoints and answers its id.
func (c *call) emit(typ string, obj any, prev any) string {
	a := c.a
	body := marshal(obj)
	ev := eventJSON{
		ID: newID("evt_", 24), Object: "event", APIVersion: apiVersion, Created: unix(c.now),
		Data: eventData{Object: body}, Livemode: a.live, Type: typ,
		Request: eventRequest{ID: nullStr(c.reqID), IdempotencyKey: nullStr(c.idemKey)},
	}
	if prev != nil {
		ev.Data.PreviousAttributes = previousAttributes(marshal(prev), body)
	}
	e := &event{id: ev.ID, typ: typ, created: c.now, body: marshal(ev)}
	a.events = append(a.events, e)
	c.s.events = append(c.s.events, Event{Account: a.key, ID: e.id, Type: typ, Created: c.now, Livemode: a.live, Body: e.body})
	c.s.deliver(a, e)
	c.s.log.Debug("pspx sandbox event", "type", typ, "id", e.id)
	return e.id
}

// previousAttributes lists the top-level fields whose value changed, with their old values.
func previousAttributes(before, after []byte) json.RawMessage {
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return nil
	}
	prev := map[string]json.RawMessage{}
	for k, v := range a {
		old, ok := b[k]
		if !ok {
			old = json.RawMessage("null")
		}
		if !jsonEqual(old, v) {
			prev[k] = old
		}
	}
	if len(prev) == 0 {
		return nil
	}
	out, _ := json.Marshal(prev)
	return out
}

func jsonEqual(x, y json.RawMessage) bool {
	var bx, by bytes.Buffer
	if json.Compact(&bx, x) != nil || json.Compact(&by, y) != nil {
		return false
	}
	return bytes.Equal(bx.Bytes(), by.Bytes())
}

// Events returns every event recorded so far, in the order they happened, as copies.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, len(s.events))
	for i, e := range s.events {
		e.Body = slices.Clone(e.Body)
		out[i] = e
	}
	return out
}

// pageOf cuts one page out of a list that is newest first, as the provider's cursor lists do:
// starting_after gives the older objects after the cursor, ending_before the newer ones before
// it (the nearest ones), and has_more says whether more lie beyond the page in that direction.
func pageOf[T any](c *call, all []T, id func(T) string, kind string) ([]T, bool, *apiError) {
	limit := int64(10)
	if l, ok := c.p.integer("limit"); ok {
		if l < 1 || l > 100 {
			return nil, false, invalidRequest(http.StatusBadRequest, "parameter_invalid_integer", "limit", "Invalid limit: must be between 1 and 100.")
		}
		limit = l
	}
	after, hasAfter := c.p.str("starting_after")
	before, hasBefore := c.p.str("ending_before")
	if hasAfter && hasBefore {
		return nil, false, errInvalid("ending_before", "You may only specify one of these parameters: starting_after, ending_before.")
	}
	cursor, param := after, "starting_after"
	if hasBefore {
		cursor, param = before, "ending_before"
	}
	if hasAfter || hasBefore {
		i := slices.IndexFunc(all, func(x T) bool { return id(x) == cursor })
		if i < 0 {
			return nil, false, errNoSuch(kind, cursor, param)
		}
		if hasAfter {
			all = all[i+1:]
		} else {
			all = all[:i]
			if int64(len(all)) > limit {
				return all[int64(len(all))-limit:], true, nil
			}
			return all, false, nil
		}
	}
	if int64(len(all)) > limit {
		return all[:limit], true, nil
	}
	return all, false, nil
}

// expansions reads expand[] against the fields an endpoint can expand.
func expansions(c *call, allowed ...string) (map[string]bool, *apiError) {
	list, _ := c.p.list("expand")
	out := map[string]bool{}
	for _, e := range list {
		if !slices.Contains(allowed, e) {
			return nil, errInvalid("expand", "This property cannot be expanded (%s).", e)
		}
		out[e] = true
	}
	return out, nil
}
