package mail

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// mailboxSize is how many messages the development mailbox keeps; older ones are dropped so a
// long-running instance does not grow without bound.
const mailboxSize = 200

// mailboxHTML is the page's body; the caller's layout wraps it (Handler).
//
//go:embed mailbox.html
var mailboxHTML string

// Mailbox is the development mailbox of the all-in-one run: instead of delivering, it keeps the
// last mailboxSize messages in memory, logs each send (recipient and subject, never the body,
// which may hold sign-in links or codes) and serves them to a browser. It is safe for concurrent
// use.
type Mailbox struct {
	log      *slog.Logger
	mu       sync.Mutex
	received []received // oldest first
}

var _ Sender = (*Mailbox)(nil)

// received is a kept message and when it arrived.
type received struct {
	Message
	At time.Time
}

// NewMailbox returns an empty mailbox that logs to log.
func NewMailbox(log *slog.Logger) *Mailbox {
	return &Mailbox{log: log}
}

// Send keeps msg after the same checks SMTP makes.
func (m *Mailbox) Send(ctx context.Context, msg Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := msg.validate(); err != nil {
		return err
	}
	m.mu.Lock()
	if len(m.received) == mailboxSize {
		m.received = slices.Delete(m.received, 0, 1)
	}
	m.received = append(m.received, received{Message: msg, At: time.Now()})
	m.mu.Unlock()
	m.log.InfoContext(ctx, "mail kept in the development mailbox",
		slog.String("to", msg.To), slog.String("subject", msg.Subject))
	return nil
}

// Messages returns the kept messages, newest first.
func (m *Mailbox) Messages() []Message {
	kept := m.snapshot()
	out := make([]Message, len(kept))
	for i, r := range kept {
		out[i] = r.Message
	}
	return out
}

// snapshot copies the kept messages, newest first, so callers never share the mailbox's slice.
func (m *Mailbox) snapshot() []received {
	m.mu.Lock()
	out := slices.Clone(m.received)
	m.mu.Unlock()
	slices.Reverse(out)
	return out
}

// jsonMessage is a message in the JSON view.
type jsonMessage struct {
	To         string    `json:"to"`
	Subject    string    `json:"subject"`
	Text       string    `json:"text"`
	HTML       string    `json:"html"`
	ReceivedAt time.Time `json:"receivedAt"`
}

// Handler serves the mailbox, newest first: GET renders an HTML page, GET ?format=json returns the
// messages as a JSON array. The page shows every value escaped; HTML bodies are rendered only
// inside sandboxed iframes (srcdoc: no scripts, a unique origin) under a Content-Security-Policy
// that the iframes inherit and that loads nothing from anywhere, so a hostile message can neither
// run code nor call out. layout parses the page: it supplies the templates "head" (given the
// title) and "foot", so the mailbox looks like the pages served beside it (the all-in-one passes
// gateway/webpage.Template).
func (m *Mailbox) Handler(layout func(name, page string) *template.Template) http.Handler {
	page := layout("mailbox", mailboxHTML)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch format := r.URL.Query().Get("format"); format {
		case "json":
			m.serveJSON(w)
		case "", "html":
			m.serveHTML(w, page)
		default:
			http.Error(w, "unknown format: use format=json or none", http.StatusBadRequest)
		}
	})
}

func (m *Mailbox) serveJSON(w http.ResponseWriter) {
	kept := m.snapshot()
	out := make([]jsonMessage, len(kept))
	for i, r := range kept {
		out[i] = jsonMessage{To: r.To, Subject: r.Subject, Text: r.Text, HTML: r.HTML, ReceivedAt: r.At}
	}
	body, err := json.Marshal(out)
	if err != nil {
		m.fail(w, "encode mailbox as JSON", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func (m *Mailbox) serveHTML(w http.ResponseWriter, page *template.Template) {
	// Rendered into a buffer first, so a template failure can still become a clean 500.
	var buf bytes.Buffer
	if err := page.Execute(&buf, m.snapshot()); err != nil {
		m.fail(w, "render mailbox page", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "+
		"form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(buf.Bytes())
}

func (m *Mailbox) fail(w http.ResponseWriter, msg string, err error) {
	m.log.Error(msg, slog.String("error", err.Error()))
	http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
}
