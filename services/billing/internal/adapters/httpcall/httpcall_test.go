package httpcall

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// recorder answers with the given statuses in turn and records each request's body and key.
type recorder struct {
	mu       sync.Mutex
	statuses []int
	bodies   []string
	keys     []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	n := len(rec.bodies)
	rec.bodies = append(rec.bodies, string(b))
	rec.keys = append(rec.keys, r.Header.Get("Idempotency-Key"))
	status := rec.statuses[min(n, len(rec.statuses)-1)]
	rec.mu.Unlock()
	w.WriteHeader(status)
}

func client(url string) *Client {
	return &Client{BaseURL: url, Backoff: func(int) time.Duration { return time.Millisecond }}
}

func TestRetriesOn429And5xxWithTheSameBodyAndIdempotencyKey(t *testing.T) {
	rec := &recorder{statuses: []int{429, 503, 200}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	resp, err := client(srv.URL).Do(context.Background(), Request{
		Method: http.MethodPost, Path: "/v1/things", Body: []byte("a=1"),
		Header: http.Header{"Idempotency-Key": {"op-1"}},
	})
	if err != nil || resp.Status != 200 {
		t.Fatalf("status %d, err %v", resp.Status, err)
	}
	if len(rec.bodies) != 3 {
		t.Fatalf("%d attempts, want 3", len(rec.bodies))
	}
	for i := range rec.bodies {
		if rec.bodies[i] != "a=1" || rec.keys[i] != "op-1" {
			t.Errorf("attempt %d sent body %q key %q", i+1, rec.bodies[i], rec.keys[i])
		}
	}
}

func TestCallerErrorsAreNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 402, 404, 409, 422} {
		rec := &recorder{statuses: []int{status, 200}}
		srv := httptest.NewServer(rec)
		resp, err := client(srv.URL).Do(context.Background(), Request{Method: http.MethodPost, Path: "/x"})
		srv.Close()
		if err != nil || resp.Status != status || len(rec.bodies) != 1 {
			t.Errorf("status %d: got %d after %d attempts (err %v), want one attempt", status, resp.Status, len(rec.bodies), err)
		}
	}
}

func TestGivesUpAfterTheAttemptsAndReturnsTheLastAnswer(t *testing.T) {
	rec := &recorder{statuses: []int{500}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := client(srv.URL)
	c.Attempts = 3
	resp, err := c.Do(context.Background(), Request{Method: http.MethodGet, Path: "/x"})
	if err != nil || resp.Status != 500 || len(rec.bodies) != 3 {
		t.Fatalf("status %d after %d attempts, err %v", resp.Status, len(rec.bodies), err)
	}
}

func TestConnectionFailuresAreRetriedThenReported(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	c := client(url)
	c.Attempts = 2
	if _, err := c.Do(context.Background(), Request{Method: http.MethodGet, Path: "/x"}); err == nil {
		t.Fatal("no error for a closed server")
	}
}

func TestRetryAfterIsReadInSecondsAndCapped(t *testing.T) {
	cases := []struct {
		header string
		want   time.Duration
	}{{"", 0}, {"x", 0}, {"-1", 0}, {"2", 2 * time.Second}, {"3600", 10 * time.Second}}
	for _, c := range cases {
		if got := retryAfter(http.Header{"Retry-After": {c.header}}); got != c.want {
			t.Errorf("Retry-After %q: %v, want %v", c.header, got, c.want)
		}
	}
}
