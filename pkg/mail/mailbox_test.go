package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func newTestMailbox() (*Mailbox, *bytes.Buffer) {
	logs := &bytes.Buffer{}
	return NewMailbox(slog.New(slog.NewJSONHandler(logs, nil))), logs
}

func numbered(i int) Message {
	return Message{To: fmt.Sprintf("user%d@example.com", i), Subject: fmt.Sprintf("subject %d", i), Text: fmt.Sprintf("body %d", i)}
}

func TestMailboxKeepsTheNewestMessagesFirstUpToItsSize(t *testing.T) {
	tests := []struct {
		sent      int
		wantLen   int
		wantFirst int // index of the newest message kept
		wantLast  int // index of the oldest message kept
	}{
		{sent: 1, wantLen: 1, wantFirst: 0, wantLast: 0},
		{sent: 3, wantLen: 3, wantFirst: 2, wantLast: 0},
		{sent: mailboxSize, wantLen: mailboxSize, wantFirst: mailboxSize - 1, wantLast: 0},
		{sent: mailboxSize + 25, wantLen: mailboxSize, wantFirst: mailboxSize + 24, wantLast: 25},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d sent", tt.sent), func(t *testing.T) {
			mb, _ := newTestMailbox()
			for i := range tt.sent {
				if err := mb.Send(t.Context(), numbered(i)); err != nil {
					t.Fatal(err)
				}
			}
			got := mb.Messages()
			if len(got) != tt.wantLen {
				t.Fatalf("%d messages kept, want %d", len(got), tt.wantLen)
			}
			if got[0] != numbered(tt.wantFirst) || got[len(got)-1] != numbered(tt.wantLast) {
				t.Errorf("newest = %v, oldest = %v; want %d and %d", got[0], got[len(got)-1], tt.wantFirst, tt.wantLast)
			}
		})
	}
}

func TestMailboxMessagesAreCopies(t *testing.T) {
	mb, _ := newTestMailbox()
	if err := mb.Send(t.Context(), numbered(0)); err != nil {
		t.Fatal(err)
	}
	got := mb.Messages()
	got[0].Subject = "changed by the caller"
	if again := mb.Messages(); again[0] != numbered(0) {
		t.Errorf("mailbox content changed through a returned slice: %v", again[0])
	}
}

func TestMailboxRefusesWhatSMTPRefuses(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"header injection in To", Message{To: "ada@example.com\r\nBcc: eve@example.com", Subject: "s", Text: "t"}},
		{"header injection in Subject", Message{To: "ada@example.com", Subject: "s\nBcc: eve@example.com", Text: "t"}},
		{"two recipients", Message{To: "ada@example.com, eve@example.com", Subject: "s", Text: "t"}},
		{"no body", Message{To: "ada@example.com", Subject: "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mb, _ := newTestMailbox()
			if err := mb.Send(t.Context(), tt.msg); !errors.Is(err, ErrInvalid) {
				t.Errorf("Send = %v, want ErrInvalid", err)
			}
			if len(mb.Messages()) != 0 {
				t.Errorf("invalid message kept")
			}
		})
	}
}

func TestMailboxSendHonoursACancelledContext(t *testing.T) {
	mb, _ := newTestMailbox()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := mb.Send(ctx, numbered(0)); !errors.Is(err, context.Canceled) {
		t.Errorf("Send = %v, want context.Canceled", err)
	}
	if len(mb.Messages()) != 0 {
		t.Errorf("message kept despite the cancelled context")
	}
}

func TestMailboxLogsRecipientAndSubjectButNeverTheBody(t *testing.T) {
	mb, logs := newTestMailbox()
	msg := Message{To: "ada@example.com", Subject: "Your sign-in code", Text: "code TEXT-SECRET-4711", HTML: "<p>HTML-SECRET-0815</p>"}
	if err := mb.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"ada@example.com", "Your sign-in code"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: %s", want, out)
		}
	}
	for _, secret := range []string{"TEXT-SECRET-4711", "HTML-SECRET-0815"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains the body: %s", out)
		}
	}
}

func serve(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), method, target, nil))
	return rec
}

// testLayout stands in for the caller's layout (gateway/webpage in the all-in-one).
func testLayout(name, page string) *template.Template {
	return template.Must(template.Must(template.New(name).Parse(
		`{{define "head"}}<!DOCTYPE html><title>{{.}}</title>{{end}}{{define "foot"}}</html>{{end}}`)).Parse(page))
}

var srcdoc = regexp.MustCompile(`<iframe sandbox srcdoc="([^"]*)"`)

func TestMailboxPageEscapesHostileMessages(t *testing.T) {
	const attack = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	hostileHTML := `<p>Hi</p><script>alert(3)</script><a href="javascript:alert(4)">x</a>`
	mb, _ := newTestMailbox()
	msg := Message{To: "ada@example.com", Subject: attack, Text: attack + "\nsecond line", HTML: hostileHTML}
	if err := mb.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	rec := serve(t, mb.Handler(testLayout), http.MethodGet, "/mail")
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d", rec.Code)
	}
	body := rec.Body.String()
	if strings.Contains(body, "<script") || strings.Contains(body, "<img") || strings.Contains(body, `href="javascript:`) {
		t.Fatalf("hostile content rendered as markup:\n%s", body)
	}
	if !strings.Contains(body, "<pre>"+html.EscapeString(attack)+"\nsecond line</pre>") {
		t.Errorf("text body not shown escaped in <pre>:\n%s", body)
	}
	if !strings.Contains(body, html.EscapeString(attack)) {
		t.Errorf("subject not shown as text")
	}
	// The HTML body is only ever rendered inside a sandboxed iframe (no allow-* tokens: no
	// scripts, unique origin), and the page's policy, which the iframe inherits, loads nothing.
	m := srcdoc.FindStringSubmatch(body)
	if m == nil || html.UnescapeString(m[1]) != hostileHTML {
		t.Errorf("HTML body not in a sandboxed srcdoc iframe:\n%s", body)
	}
	h := rec.Header()
	csp := h.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers = %v", h)
	}
}

func TestMailboxPageWhenEmpty(t *testing.T) {
	mb, _ := newTestMailbox()
	rec := serve(t, mb.Handler(testLayout), http.MethodGet, "/mail")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "No messages yet") {
		t.Errorf("status %d, body:\n%s", rec.Code, rec.Body.String())
	}
}

func TestMailboxJSONViewListsMessagesNewestFirst(t *testing.T) {
	mb, _ := newTestMailbox()
	rec := serve(t, mb.Handler(testLayout), http.MethodGet, "/mail?format=json")
	if strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Errorf("empty mailbox JSON = %q, want []", rec.Body.String())
	}

	first := Message{To: "ada@example.com", Subject: "first", Text: "t1"}
	second := Message{To: "bob@example.com", Subject: "second <b>", Text: "t2", HTML: "<p>h2</p>"}
	for _, m := range []Message{first, second} {
		if err := mb.Send(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	rec = serve(t, mb.Handler(testLayout), http.MethodGet, "/mail?format=json")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var got []jsonMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, rec.Body.String())
	}
	if len(got) != 2 {
		t.Fatalf("%d messages, want 2", len(got))
	}
	for i, want := range []Message{second, first} {
		g := got[i]
		if (Message{To: g.To, Subject: g.Subject, Text: g.Text, HTML: g.HTML}) != want || g.ReceivedAt.IsZero() {
			t.Errorf("message %d = %+v, want %+v with a receipt time", i, g, want)
		}
	}
}

func TestMailboxHandlerRefusesOtherMethodsAndFormats(t *testing.T) {
	mb, _ := newTestMailbox()
	tests := []struct {
		method, target string
		status         int
	}{
		{http.MethodPost, "/mail", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/mail", http.StatusMethodNotAllowed},
		{http.MethodGet, "/mail?format=xml", http.StatusBadRequest},
		{http.MethodHead, "/mail", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			if rec := serve(t, mb.Handler(testLayout), tt.method, tt.target); rec.Code != tt.status {
				t.Errorf("status = %d, want %d", rec.Code, tt.status)
			}
		})
	}
}
