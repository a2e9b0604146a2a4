package webpage

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// A page's failure is an error for an operator to look into, unless its visitor had already left:
// then the backend call failed because of that, and it must not raise an error line.
func TestAFailureIsLoggedAtErrorUnlessTheVisitorLeft(t *testing.T) {
	left, leave := context.WithCancel(context.Background())
	leave()
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		wantError bool
	}{
		{"the visitor waits for the card", context.Background(), true},
		{"the visitor left while the call ran", left, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			r := httptest.NewRequestWithContext(tc.ctx, "GET", "/login", nil)
			LogFailure(log, r, "login link check failed", errors.New("rpc error: code = Canceled desc = context canceled"))
			if got := strings.Contains(logs.String(), `"level":"ERROR"`); got != tc.wantError {
				t.Errorf("logged at error: %v, want %v: %s", got, tc.wantError, logs.String())
			}
			if !strings.Contains(logs.String(), `"msg":"login link check failed"`) || !strings.Contains(logs.String(), "code = Canceled") {
				t.Errorf("the line lost its message or cause: %s", logs.String())
			}
		})
	}
}
