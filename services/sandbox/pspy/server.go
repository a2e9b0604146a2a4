package pspy

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/delivery"
	"github.com/berthhq/berth/services/sandbox/idempotency"
)

// Config configures a sandbox.
type Config struct {
	Clock *clock.Clock // nil = a clock of its own at real time
	// BaseURL is the public URL the sandbox root is reachable at, such as
	// http://127.0.0.1:8080/_sandbox/pspy: resources' links and checkout pages are built on it.
	BaseURL string
	Log     *slog.Logger // nil = discard
	// Deliveries posts every notification to its webhook URL; nil records them only
	// (Notifications).
	Deliveries *delivery.Queue
}

// Server is the sandbox: an http.Handler serving the API under /v2 and the hosted checkout pages
// under /checkout, relative to its root.
type Server struct {
	clock *clock.Clock
	base  string
	log   *slog.Logger
	mux   *http.ServeMux
	idem  idempotency.Store
	queue *delivery.Queue

	mu            sync.Mutex
	customers     map[string]*customer
	payments      map[string]*payment
	mandates      map[string]*mandate
	subscriptions map[string]*subscription
	subSeq        int // creation order of subscriptions, which breaks ties between equal due dates
	notifications []Notification
}

// Notification is a webhook call the provider makes: a form-encoded POST of id=<PaymentID> to
// WebhookURL, which tells the merchant to fetch the payment again.
type Notification struct {
	WebhookURL string
	PaymentID  string
	At         time.Time
}

// maxBody bounds a request body, as the provider does.
const maxBody = 1 << 20

// New returns an empty sandbox and registers its renewals on the clock.
func New(cfg Config) *Server {
	s := &Server{
		clock:         cfg.Clock,
		base:          strings.TrimRight(cfg.BaseURL, "/"),
		log:           cfg.Log,
		queue:         cfg.Deliveries,
		mux:           http.NewServeMux(),
		customers:     map[string]*customer{},
		payments:      map[string]*payment{},
		mandates:      map[string]*mandate{},
		subscriptions: map[string]*subscription{},
	}
	if s.clock == nil {
		s.clock = clock.New()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.clock.OnAdvance(s.renew)

	s.mux.HandleFunc("POST /v2/customers", s.api(s.createCustomer))
	s.mux.HandleFunc("GET /v2/customers/{id}", s.api(s.getCustomer))
	s.mux.HandleFunc("POST /v2/payments", s.api(s.createPayment))
	s.mux.HandleFunc("GET /v2/payments/{id}", s.api(s.getPayment))
	s.mux.HandleFunc("POST /v2/payments/{id}/refunds", s.api(s.createRefund))
	s.mux.HandleFunc("GET /v2/customers/{id}/mandates", s.api(s.listMandates))
	s.mux.HandleFunc("DELETE /v2/customers/{id}/mandates/{mandateId}", s.api(s.revokeMandate))
	s.mux.HandleFunc("POST /v2/customers/{id}/subscriptions", s.api(s.createSubscription))
	s.mux.HandleFunc("GET /v2/customers/{id}/subscriptions/{subId}", s.api(s.getSubscription))
	s.mux.HandleFunc("DELETE /v2/customers/{id}/subscriptions/{subId}", s.api(s.cancelSubscription))
	s.mux.HandleFunc("POST /payments/{id}/chargeback", s.api(s.chargeback))
	s.mux.HandleFunc("GET /checkout/{id}", s.checkoutPage)
	s.mux.HandleFunc("POST /checkout/{id}", s.checkoutSubmit)
	// Anything else, a known path with another method included, gets the provider's problem
	// rather than the mux's plain-text answer.
	s.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		write(w, problem(http.StatusNotFound, "The requested resource or endpoint does not exist.", ""))
	})
	return s
}

// ServeHTTP serves the API and the checkout pages.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Notifications returns a copy of every webhook call recorded so far, oldest first.
func (s *Server) Notifications() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notification(nil), s.notifications...)
}

// notify records a webhook call about a payment whose state changed and hands it to the delivery
// queue; a payment without a webhook URL gets none, as with the provider. The caller holds s.mu.
func (s *Server) notify(p *payment, at time.Time) {
	if p.webhookURL == "" {
		return
	}
	s.notifications = append(s.notifications, Notification{WebhookURL: p.webhookURL, PaymentID: p.id, At: at})
	if s.queue == nil {
		return
	}
	s.queue.Enqueue(delivery.Job{
		Provider: delivery.Pspy, Mode: p.mode, PaymentID: p.id, Type: "notification", URL: p.webhookURL,
		Body: []byte(url.Values{"id": {p.id}}.Encode()), Lane: p.webhookURL, Header: notificationHeader,
	})
}

// notificationHeader is the header of every notification: the body is the form id=<payment id>,
// which tells the merchant to fetch the payment again; nothing in it is signed.
func notificationHeader(time.Time) http.Header {
	return http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "User-Agent": {"Pspy-Webhook/2.0"}}
}

// call is one authenticated API request. The account is the secret key itself.
type call struct {
	key  string
	mode string // "test" or "live"
	r    *http.Request
	body []byte
}

var keyPattern = regexp.MustCompile(`^(test|live)_[A-Za-z0-9]{1,250}$`)

// api authenticates a request, reads its body and, for a POST, runs it through the idempotency
// store so a repeated Idempotency-Key replays the first answer.
func (s *Server) api(h func(call) idempotency.Answer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		m := keyPattern.FindStringSubmatch(key)
		if !ok || m == nil {
			write(w, problem(http.StatusUnauthorized, "Missing authentication, or failed to authenticate.", ""))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			write(w, problem(http.StatusBadRequest, "The request body could not be read or exceeds 1 MiB.", ""))
			return
		}
		c := call{key: key, mode: m[1], r: r, body: body}
		if r.Method != http.MethodPost {
			write(w, h(c))
			return
		}
		params := append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), body...)
		answer, outcome := s.idem.Run(key, r.Header.Get("Idempotency-Key"), params, func() idempotency.Answer { return h(c) })
		if outcome == idempotency.Mismatch {
			answer = problem(http.StatusUnprocessableEntity, "The idempotency key was already used for a request with other parameters.", "")
		}
		write(w, answer)
	}
}

func write(w http.ResponseWriter, a idempotency.Answer) {
	if len(a.Body) > 0 {
		w.Header().Set("Content-Type", "application/hal+json")
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

const docsURL = "https://docs.pspy.example/reference/v2"

// link is a hal link.
type link struct {
	Href string `json:"href"`
	Type string `json:"type"`
}

func docs() *link { return &link{Href: docsURL, Type: "text/html"} }

func (s *Server) self(path string) *link {
	return &link{Href: s.base + path, Type: "application/hal+json"}
}

// titles are the problems' titles, as the provider words them.
var titles = map[int]string{
	http.StatusBadRequest:          "Bad Request",
	http.StatusUnauthorized:        "Unauthorized Request",
	http.StatusNotFound:            "Not Found",
	http.StatusUnprocessableEntity: "Unprocessable Entity",
}

// problem is the provider's error answer; field names the request field at fault, if one is.
func problem(status int, detail, field string) idempotency.Answer {
	b, _ := json.Marshal(struct {
		Status int              `json:"status"`
		Title  string           `json:"title"`
		Detail string           `json:"detail"`
		Field  string           `json:"field,omitempty"`
		Links  map[string]*link `json:"_links"`
	}{status, titles[status], detail, field, map[string]*link{"documentation": docs()}})
	return idempotency.Answer{Status: status, Body: b}
}

// fieldError is a request field the provider refuses, answered with 422.
type fieldError struct {
	field  string
	detail string
}

func (e *fieldError) answer() idempotency.Answer {
	return problem(http.StatusUnprocessableEntity, e.detail, e.field)
}

// resource renders an answer's JSON body.
func resource(status int, v any) idempotency.Answer {
	b, _ := json.Marshal(v) // strings, numbers, maps and metadata decoded from JSON: it cannot fail
	return idempotency.Answer{Status: status, Body: b}
}

// decode reads a JSON object body into v. An empty body is an empty object. Syntax errors are
// the provider's 400; a value of the wrong type in a field is a 422 naming that field.
func decode(body []byte, v any) *idempotency.Answer {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		a := problem(http.StatusUnprocessableEntity, "The field has a value of the wrong type.", typeErr.Field)
		return &a
	case errors.As(err, &typeErr):
		a := problem(http.StatusBadRequest, "The request body must be a JSON object.", "")
		return &a
	}
	a := problem(http.StatusBadRequest, "The request body is not valid JSON.", "")
	return &a
}

// metadata validates a metadata value: any JSON up to 1 KiB, as the provider allows.
func metadata(raw json.RawMessage) (json.RawMessage, *fieldError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > 1024 {
		return nil, &fieldError{"metadata", "The metadata must not exceed 1024 bytes."}
	}
	return raw, nil
}

// stamp renders a time as the provider does: ISO 8601 with a numeric offset.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05-07:00") }

// stampOrEmpty renders a time that may be unset; omitempty drops the field then.
func stampOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return stamp(t)
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newID returns a prefixed random id such as tr_WDqYK6vllg.
func newID(prefix string) string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return prefix + string(b)
}
