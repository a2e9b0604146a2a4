package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/reqid"
)

// Go's HTTP server parses a request's line and headers before any handler runs, and answers one
// it cannot parse itself: a malformed escape in the path (/v1/users/%zz: the URL parser refuses
// it), a malformed request line (a space in the target), a header name or value with a control
// byte, a missing or malformed Host. It writes a plain-text 400 straight to the connection and
// closes it, without reading what the client still sends, so a client in the middle of a body
// may see a reset instead of the answer. No handler, middleware or http.Server option sees that
// request; the connection does. Listener watches it there: it recognises the server's refusal
// by its exact bytes and writes the refusal in the family of the request's path instead.

// Listener returns ln with its connections watched for Go's own refusals of requests it cannot
// parse, each answered instead as a 400 in the family of the request's path (familyOfPath on
// the target as sent), with a request id and an access-log line on log, and followed by a
// graceful close. Serve the edge's http.Server on it, over plain TCP: what TLS wraps after this
// listener is passed through unread.
//
// The path's family is read off the bytes the connection received since it last wrote, which
// is where the refused request starts unless the client pipelines requests (sends the next
// before it read an answer, which no browser or common client does); then the refusal may take
// the family of a later request's path. Go's other refusals stay its own: 431 (headers larger
// than the server's limit), 501 (an unknown transfer encoding) and 505 (an unknown HTTP version)
// are statuses no family has.
func Listener(ln net.Listener, log *slog.Logger) net.Listener {
	return refusingListener{Listener: ln, log: log}
}

type refusingListener struct {
	net.Listener
	log *slog.Logger
}

func (l refusingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &watchedConn{Conn: c, log: l.log}, nil
}

// Go's refusal: "HTTP/1.1 400 Bad Request" with an optional ": <reason>", these headers, and
// the status line's text again as the body (net/http's conn.serve).
const (
	refusedStatus  = "HTTP/1.1 400 Bad Request"
	refusedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
)

// headMax bounds what a watched connection keeps of a request: enough of its first line for the
// target's family and what in it failed.
const headMax = 2048

// After a refusal the connection is half-closed and read for up to lingerFor or lingerMax bytes
// (a whole body at the edge's limit), so the client's unsent bytes do not reset the connection
// before it has read the answer.
const (
	lingerFor = 500 * time.Millisecond
	lingerMax = maxBody + 64<<10
)

// watchedConn is one connection of Listener.
type watchedConn struct {
	net.Conn
	log *slog.Logger

	mu      sync.Mutex // the server's background read runs beside its writes
	head    []byte     // the first bytes read since the last write: the request being read
	refused bool

	closing sync.Once
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if room := headMax - len(c.head); room > 0 {
			c.head = append(c.head, p[:min(n, room)]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *watchedConn) Write(p []byte) (int, error) {
	reason, refused := serverRefusal(p)
	c.mu.Lock()
	var answer []byte
	if refused {
		answer = c.refusal(c.head, reason)
		c.refused = true
	}
	c.head = c.head[:0] // whatever is read next is the next request
	c.mu.Unlock()
	if !refused {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(answer); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close ends a connection whose request was refused gracefully (linger), in the background, so
// the server's goroutine (or its Close) does not wait for the client.
func (c *watchedConn) Close() error {
	c.mu.Lock()
	refused := c.refused
	c.mu.Unlock()
	if !refused {
		return c.Conn.Close()
	}
	c.closing.Do(func() { go c.linger() })
	return nil
}

// CloseWrite lets the server half-close the connection as it does on a plain TCP connection.
func (c *watchedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *watchedConn) linger() {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = c.Conn.SetReadDeadline(time.Now().Add(lingerFor))
		_, _ = io.CopyN(io.Discard, c.Conn, lingerMax)
	}
	_ = c.Conn.Close()
}

// serverRefusal reports whether p is Go's refusal of a request it could not parse, and its reason
// ("" when it gives none). A handler's 400 never matches: the server writes a handler's headers in
// sorted order, with a Date, and never Connection after Content-Type.
func serverRefusal(p []byte) (reason string, ok bool) {
	if !bytes.HasPrefix(p, []byte(refusedStatus)) {
		return "", false
	}
	line, body, found := bytes.Cut(p, []byte(refusedHeaders))
	if !found || !bytes.Equal(body, line[len("HTTP/1.1 "):]) {
		return "", false
	}
	rest := string(line[len(refusedStatus):])
	if rest != "" && !strings.HasPrefix(rest, ": ") {
		return "", false
	}
	return strings.TrimPrefix(rest, ": "), true
}

// refusal renders Go's refusal of the request that head starts as the edge's 400, and logs it.
func (c *watchedConn) refusal(head []byte, reason string) []byte {
	method, target := requestLine(head)
	f := failure{status: http.StatusBadRequest}
	switch {
	case strings.Contains(reason, "Host"):
		f.message, f.validation = "Host: missing or malformed", "Host"
	case malformedEscape(target):
		f.message, f.validation = "path: not a valid path (malformed escape)", "path"
	case strings.HasPrefix(reason, "invalid header") || controlInHeaders(head):
		f.message, f.validation = "header: not a valid header name or value", "header"
	default:
		f.message, f.validation = "request: not a valid HTTP request", "request"
	}
	path := pathOf(target)
	body, err := json.Marshal(render(familyOfPath(path), f))
	if err != nil { // the edge's own fixed structs always marshal
		panic(fmt.Sprintf("edge: marshal refusal: %v", err))
	}
	id := reqid.New()
	if c.log != nil {
		c.log.LogAttrs(reqid.With(context.Background(), id), slog.LevelInfo, "http request",
			slog.String("method", logText(method, 32)),
			slog.String("path", logText(path, 256)),
			slog.Int("status", f.status),
			slog.String("refused", f.validation))
	}
	observeHTTP(routeLabel("", ""), "400", time.Now())
	return fmt.Appendf(nil, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: %d\r\nContent-Type: application/json\r\n%s: %s\r\n\r\n%s",
		len(body), reqid.Header, id, body)
}

// requestLine reads the method and target of the request line that head starts with.
func requestLine(head []byte) (method, target string) {
	line := bytes.TrimLeft(head, "\r\n")
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	m, rest, _ := bytes.Cut(line, []byte(" "))
	t, _, _ := bytes.Cut(rest, []byte(" "))
	return string(m), string(t)
}

// controlInHeaders reports whether the header lines that head holds (after its request line, up
// to the blank line) have a control byte other than tab: the server's header reader refuses
// those without a reason.
func controlInHeaders(head []byte) bool {
	_, headers, _ := bytes.Cut(bytes.TrimLeft(head, "\r\n"), []byte("\n"))
	headers, _, _ = bytes.Cut(headers, []byte("\r\n\r\n"))
	for _, b := range headers {
		if (b < ' ' && b != '\t' && b != '\r' && b != '\n') || b == 0x7f {
			return true
		}
	}
	return false
}

// pathOf is the path part of a request target, in the origin form (/v1/...) or the absolute
// form (http://host/v1/...); "" for any other.
func pathOf(target string) string {
	if strings.HasPrefix(target, "/") {
		return target
	}
	if _, rest, ok := strings.Cut(target, "://"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
	}
	return ""
}

// malformedEscape reports whether the URL parser refuses target for an escape.
func malformedEscape(target string) bool {
	_, err := url.ParseRequestURI(target)
	var esc url.EscapeError
	return errors.As(err, &esc)
}

// logText is v as a log may hold it: valid UTF-8, at most n bytes.
func logText(v string, n int) string {
	if len(v) > n {
		v = v[:n]
	}
	return strings.ToValidUTF8(v, "\uFFFD")
}
