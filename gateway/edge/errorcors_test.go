package edge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOrigins answers a listing of every app's origins and counts the calls.
type fakeOrigins struct {
	calls atomic.Int32
	mu    sync.Mutex
	list  []string
	err   error
}

func (f *fakeOrigins) listing(context.Context) ([]string, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.list, f.err
}

func (f *fakeOrigins) set(list []string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list, f.err = list, err
}

// clock is a settable time for the cache.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestOrigins(f *fakeOrigins, c *clock) *anyAppOrigins {
	return &anyAppOrigins{list: f.listing, now: c.now}
}

func TestErrorAnswersCarryCORSForAnyAppsOriginOnly(t *testing.T) {
	f := &fakeOrigins{list: []string{"http://localhost:3000", "https://shop.example"}}
	o := newTestOrigins(f, &clock{t: time.Unix(1e9, 0)})
	for _, tc := range []struct {
		name, path, origin, already string
		allowed                     bool
	}{
		{"some app's origin on /v1", "/v1/users/me", "https://shop.example", "", true},
		{"written differently, echoed as sent", "/v1/users/me", "https://SHOP.example:443", "", true},
		{"another app's origin on /api/v1", "/api/v1/tokens", "http://localhost:3000", "", true},
		{"unknown path in a family", "/v1/nope", "http://localhost:3000", "", true},
		{"an origin no app allows", "/v1/users/me", "https://evil.example", "", false},
		{"no Origin", "/v1/users/me", "", "", false},
		{"not an origin", "/v1/users/me", "null", "", false},
		{"the hosted login page", "/login", "https://shop.example", "", false},
		{"a path that only starts like a family", "/v1x", "https://shop.example", "", false},
		{"already allowed for the app in question", "/v1/users/me", "https://shop.example", "https://shop.example", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			h := http.Header{}
			if tc.already != "" {
				h.Set("Access-Control-Allow-Origin", tc.already)
				h.Add("Vary", "Origin")
			}
			o.confirmError(r, h)
			acao, vary := h.Get("Access-Control-Allow-Origin"), h.Values("Vary")
			switch {
			case tc.allowed && (acao != tc.origin || len(vary) != 1 || vary[0] != "Origin"):
				t.Fatalf("Access-Control-Allow-Origin %q, Vary %q; want %q once with Vary: Origin", acao, vary, tc.origin)
			case !tc.allowed && (acao != "" || len(vary) != 0):
				t.Fatalf("Access-Control-Allow-Origin %q, Vary %q; want none", acao, vary)
			}
		})
	}
}

func TestTheOriginListIsCachedAndRefreshedAfterItsTTL(t *testing.T) {
	f := &fakeOrigins{list: []string{"https://shop.example"}}
	c := &clock{t: time.Unix(1e9, 0)}
	o := newTestOrigins(f, c)
	ctx := context.Background()
	lookup := func(origin string) bool { return o.current(ctx)[origin] }

	var wg sync.WaitGroup
	for range 20 { // a cold cache lists once however many error answers wait for it
		wg.Add(1)
		go func() { defer wg.Done(); lookup("https://shop.example") }()
	}
	wg.Wait()
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d listings on a cold cache, want 1", n)
	}
	f.set([]string{"https://new.example"}, nil)
	c.advance(originsTTL - time.Second)
	if !lookup("https://shop.example") || f.calls.Load() != 1 {
		t.Fatalf("a warm cache listed again (%d calls) or lost its origin", f.calls.Load())
	}
	c.advance(time.Second)
	if lookup("https://shop.example") || !lookup("https://new.example") || f.calls.Load() != 2 {
		t.Fatalf("after the TTL the list was not refreshed (%d calls)", f.calls.Load())
	}

	// A failed listing keeps the previous list and is not retried on every answer.
	f.set(nil, errors.New("identity down"))
	c.advance(originsTTL)
	first, second := lookup("https://new.example"), lookup("https://new.example") // two answers after the failure
	if !first || !second || f.calls.Load() != 3 {
		t.Fatalf("a failed listing dropped the list or was retried at once (%d calls)", f.calls.Load())
	}
	c.advance(originsRetry)
	lookup("https://new.example")
	if f.calls.Load() != 4 {
		t.Fatalf("a failed listing was not retried after %v (%d calls)", originsRetry, f.calls.Load())
	}
}

// Whoever writes the answer (a route, the routing error, the middleware), an error passes the
// recorder and gets the header; a success never does.
func TestEveryErrorAnswerOfTheMiddlewareGetsAnyAppsOriginAndNoSuccessDoes(t *testing.T) {
	o := newTestOrigins(&fakeOrigins{list: []string{"https://shop.example"}}, &clock{t: time.Unix(1e9, 0)})
	for _, status := range []int{200, 204, 400, 401, 403, 404, 500} {
		h := withMiddleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
		}), discard, o)
		r := httptest.NewRequest(http.MethodGet, "/v1/users/me", nil)
		r.Header.Set("Origin", "https://shop.example")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got, want := w.Header().Get("Access-Control-Allow-Origin") != "", status >= 400; got != want {
			t.Errorf("status %d: Access-Control-Allow-Origin present = %v, want %v", status, got, want)
		}
	}
}
