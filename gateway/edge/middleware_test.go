package edge

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/berthhq/berth/pkg/logx"
)

func TestAcceptedMediaType(t *testing.T) {
	tests := []struct {
		contentType string
		want        bool
	}{
		{"", true},
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"APPLICATION/JSON;charset=UTF-8", true},
		{"text/plain", true},
		{"text/plain; charset=utf-8", true},
		{"application/json; charset", true}, // broken parameter, usable type
		{"application/xml", false},
		{"application/x-www-form-urlencoded", false},
		{"multipart/form-data; boundary=x", false},
		{"application/merge-patch+json", false},
		{"json", false},
	}
	for _, tt := range tests {
		if got := acceptedMediaType(tt.contentType); got != tt.want {
			t.Errorf("acceptedMediaType(%q) = %v, want %v", tt.contentType, got, tt.want)
		}
	}
}

func TestPanicBecomesA500InThePathsFamily(t *testing.T) {
	tests := []struct {
		name string
		path string
		api  bool
	}{
		{"v1 path", "/v1/tenants/t1", false},
		{"api path", "/api/v1/tokens", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			h := withMiddleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				panic("nil map write in handler")
			}), logx.New(logs, "info"), nil)
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			req.Header.Set("X-Request-Id", "panic-1")
			h.ServeHTTP(rec, req)
			if tt.api {
				wantAPIFailure(t, rec, 500, "", "[E0000]", "Internal Server Error")
			} else {
				wantV1Failure(t, rec, 500, "Internal Server Error")
			}
			if rec.Header().Get("X-Request-Id") != "panic-1" {
				t.Errorf("X-Request-Id = %q", rec.Header().Get("X-Request-Id"))
			}
			logged := logs.String()
			if !strings.Contains(logged, "nil map write in handler") || !strings.Contains(logged, `"status":500`) {
				t.Errorf("panic or its 500 not logged: %s", logged)
			}
		})
	}
}

func TestPanicAfterTheResponseStartedKeepsTheResponse(t *testing.T) {
	h := withMiddleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"partial":true}`))
		panic("late")
	}), discard, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/x", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != `{"partial":true}` {
		t.Errorf("got %d %s, want the response already sent untouched", rec.Code, rec.Body.String())
	}
}

// A response broken off on purpose reaches net/http as the bare http.ErrAbortHandler (the only
// panic it closes the connection for without a stack dump) and is logged once, as a warning with
// the request id and reason: never as an access line whose status claims an answer.
func TestAnAbortedResponseReachesNetHTTPAsTheSentinelAndIsLoggedOnceAsAWarning(t *testing.T) {
	tests := []struct {
		name   string
		panic  func()
		reason any // nil: the log line has no reason
	}{
		{"abort with a reason", func() { abort(errors.New("list stream ended early")) }, "list stream ended early"},
		{"a bare http.ErrAbortHandler", func() { panic(http.ErrAbortHandler) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			h := withMiddleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(`{"partial":`))
				tc.panic()
			}), logx.New(logs, "info"), nil)
			req := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
			req.Header.Set("X-Request-Id", "abort-1")
			aborted, served200 := testutil.ToFloat64(httpRequests.WithLabelValues("unmatched", codeAborted)), testutil.ToFloat64(httpRequests.WithLabelValues("unmatched", "200"))
			func() {
				defer func() {
					if p := recover(); p != http.ErrAbortHandler {
						t.Errorf("recovered %#v, want http.ErrAbortHandler itself", p)
					}
				}()
				h.ServeHTTP(httptest.NewRecorder(), req)
			}()
			// Counted as aborted, not as the 200 its status line said.
			if testutil.ToFloat64(httpRequests.WithLabelValues("unmatched", codeAborted)) != aborted+1 ||
				testutil.ToFloat64(httpRequests.WithLabelValues("unmatched", "200")) != served200 {
				t.Errorf("the aborted request was not counted as aborted (and only so)")
			}
			lines := logLines(t, logs.Bytes())
			if len(lines) != 1 {
				t.Fatalf("want one log line, got %d:\n%s", len(lines), logs)
			}
			l := lines[0]
			if l["level"] != "WARN" || l["msg"] != "http request aborted" || l["request_id"] != "abort-1" || l["status_sent"] != 200.0 ||
				l["reason"] != tc.reason || l["status"] != nil {
				t.Fatalf("log line %v", l)
			}
		})
	}
}
