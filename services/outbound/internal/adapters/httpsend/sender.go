package httpsend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// ErrRefusedAddress is a connection the guard refused: the endpoint resolved to an address Berth
// does not send to.
var ErrRefusedAddress = errors.New("refused address")

// guard is the dialer's Control: it runs on the resolved address of every connection attempt.
func guard(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refusedError{address}
	}
	if domain.Refused(ap.Addr()) {
		return refusedError{ap.Addr().String()}
	}
	return nil
}

// refusedError is the guard's refusal of one address; it is an ErrRefusedAddress.
type refusedError struct{ addr string }

func (e refusedError) Error() string {
	return "refused address: " + e.addr + " is not a public address"
}

func (refusedError) Is(target error) bool { return target == ErrRefusedAddress }

// Sender implements app.Sender.
type Sender struct {
	client *http.Client
}

// New returns a sender. allowPrivate lifts the address guard: the all-in-one's setting, so a
// newcomer can point an endpoint at a receiver on the same machine. Production leaves it off.
func New(allowPrivate bool) *Sender {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = guard
	}
	transport := &http.Transport{
		// No proxy from the environment: a proxy would connect for us, past the guard.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: domain.AttemptTimeout,
	}
	return &Sender{client: &http.Client{
		Transport: transport,
		Timeout:   domain.AttemptTimeout,
		// A redirect is an answer, not an instruction: following it would send the signed body
		// wherever the receiver (or whoever took its name) points, internal addresses included.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Send POSTs body to url with header and reports the attempt (At is the caller's to set).
func (s *Sender) Send(ctx context.Context, url string, header map[string]string, body []byte) domain.Attempt {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, domain.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return domain.Attempt{Error: "the endpoint URL does not make a request", Duration: time.Since(start)}
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return domain.Attempt{Error: describe(err), Duration: time.Since(start)}
	}
	defer func() { _ = resp.Body.Close() }() // the answer is read; a close error changes nothing
	head, _ := io.ReadAll(io.LimitReader(resp.Body, domain.MaxResponseBytes))
	// Drain a little more so the connection can be reused, without reading an endless body.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	return domain.Attempt{Status: resp.StatusCode, Response: domain.TruncateResponse(head), Duration: time.Since(start)}
}

// describe says why no answer came, without the URL (a receiver's URL may carry a token).
func describe(err error) string {
	var netErr net.Error
	var refusal refusedError
	switch {
	case errors.As(err, &refusal):
		return refusal.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer within %s", domain.AttemptTimeout)
	case errors.As(err, new(*net.DNSError)):
		return "the endpoint's host name does not resolve"
	case errors.As(err, new(*net.OpError)):
		return "the endpoint refused or dropped the connection"
	}
	return "the request failed"
}
