package ops

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEndpointsAnswerLivenessReadinessAndMetrics(t *testing.T) {
	var notReady error
	srv := httptest.NewServer(Handler(func(context.Context) error { return notReady }, false))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get(HealthPath); code != http.StatusOK {
		t.Fatalf("/healthz = %d", code)
	}
	if code, _ := get(ReadyPath); code != http.StatusOK {
		t.Fatalf("/readyz while ready = %d", code)
	}
	notReady = errors.New("identity: database: connection refused")
	if code, body := get(ReadyPath); code != http.StatusServiceUnavailable || !strings.Contains(body, "database") {
		t.Fatalf("/readyz while not ready = %d %q", code, body)
	}
	if code, body := get(MetricsPath); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics = %d, no Go runtime metrics", code)
	}
}

func TestTheProfilerIsServedOnlyWhenTurnedOn(t *testing.T) {
	for _, on := range []bool{false, true} {
		srv := httptest.NewServer(Handler(func(context.Context) error { return nil }, on))
		res, err := http.Get(srv.URL + "/debug/pprof/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		srv.Close()
		if want := map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[on]; res.StatusCode != want {
			t.Errorf("profiler %v: /debug/pprof/ = %d, want %d", on, res.StatusCode, want)
		}
	}
}
