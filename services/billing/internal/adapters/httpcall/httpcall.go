package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// maxBody bounds what is read of a provider's answer: invoice lists are the largest (100 invoices).
const maxBody = 8 << 20

// Client sends requests to one provider's base URL.
type Client struct {
	HTTP    *http.Client // nil = a client with a 30 s timeout
	BaseURL string       // e.g. https://api.pspx.example or http://127.0.0.1:8080/_sandbox/pspx
	// Attempts is how often a retryable request is tried in all; 0 = 4.
	Attempts int
	// Backoff is the wait before retry n (1-based); nil = 250 ms doubling with jitter. A 429's
	// Retry-After, when longer, wins.
	Backoff func(n int) time.Duration
}

// Request is one call.
type Request struct {
	Method string
	Path   string // with query, relative to BaseURL
	Header http.Header
	Body   []byte
}

// Response is the provider's final answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends r and retries it as the package describes. It returns the last answer whatever its
// status, or an error when no answer arrived at all.
func (c *Client) Do(ctx context.Context, r Request) (Response, error) {
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	var lastErr error
	for n := 1; ; n++ {
		resp, err := c.once(ctx, r)
		if err == nil && !retryable(resp.Status) {
			return resp, nil
		}
		if n >= attempts {
			if err != nil {
				return Response{}, err
			}
			return resp, nil
		}
		wait := c.backoff(n)
		if err == nil {
			if ra := retryAfter(resp.Header); ra > wait {
				wait = ra
			}
		}
		lastErr = err
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return Response{}, lastErr
			}
			return Response{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func (c *Client) once(ctx context.Context, r Request) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, c.BaseURL+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return Response{}, err
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	defer func() { _ = resp.Body.Close() }() // the answer is read below; closing it loses nothing
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: reading the answer: %w", r.Method, r.Path, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

func retryable(status int) bool { return status == http.StatusTooManyRequests || status >= 500 }

func (c *Client) backoff(n int) time.Duration {
	if c.Backoff != nil {
		return c.Backoff(n)
	}
	d := 250 * time.Millisecond << (n - 1)
	return d/2 + rand.N(d/2+1) // jitter, so many clients retrying one outage spread out
}

// retryAfter reads a Retry-After given in seconds (the form both providers use), capped so a
// misbehaving provider cannot stall a request for long.
func retryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, 10*time.Second)
}
