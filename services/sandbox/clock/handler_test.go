package clock

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestClockControlAdvancesAndRunsTheHooks(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Clock{now: func() time.Time { return start }}
	var ran []time.Time
	c.OnAdvance(func(_ context.Context, now time.Time) { ran = append(ran, now) })
	h := c.Handler()

	cases := []struct {
		method, body string
		code         int
		now          time.Time
	}{
		{http.MethodGet, "", http.StatusOK, start},
		{http.MethodPost, `{"seconds": 86400}`, http.StatusOK, start.Add(24 * time.Hour)},
		{http.MethodPost, `{"seconds": 0}`, http.StatusOK, start.Add(24 * time.Hour)},
		{http.MethodPost, `{"seconds": -5}`, http.StatusBadRequest, time.Time{}},
		{http.MethodPost, `{"seconds": 1.5}`, http.StatusBadRequest, time.Time{}},
		{http.MethodPost, `{"seconds": 1e12}`, http.StatusBadRequest, time.Time{}},
		{http.MethodPost, `{"secs": 5}`, http.StatusBadRequest, time.Time{}},
		{http.MethodPost, `{}`, http.StatusBadRequest, time.Time{}},
		{http.MethodPost, `not json`, http.StatusBadRequest, time.Time{}},
		{http.MethodDelete, "", http.StatusMethodNotAllowed, time.Time{}},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/_sandbox/clock/advance", strings.NewReader(tc.body)))
		if rec.Code != tc.code {
			t.Fatalf("%s %s: status %d, want %d (%s)", tc.method, tc.body, rec.Code, tc.code, rec.Body)
		}
		if tc.code != http.StatusOK {
			continue
		}
		var got struct{ Now time.Time }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || !got.Now.Equal(tc.now) {
			t.Fatalf("%s %s: now %v (%v), want %v", tc.method, tc.body, got.Now, err, tc.now)
		}
	}
	if len(ran) != 2 || !ran[0].Equal(start.Add(24*time.Hour)) {
		t.Fatalf("hooks ran at %v, want twice, first at %v", ran, start.Add(24*time.Hour))
	}
}
