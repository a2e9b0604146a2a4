package fault_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

func TestConstructorsSetKindFieldAndRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		err        *fault.Fault
		kind       fault.Kind
		message    string
		field      string
		retryAfter time.Duration
	}{
		{"invalid", fault.Invalid("email", "email must be valid"), fault.KindInvalid, "email must be valid", "email", 0},
		{"not found", fault.NotFound("%s not found", "User"), fault.KindNotFound, "User not found", "", 0},
		{"unauthenticated", fault.Unauthenticated("missing credentials"), fault.KindUnauthenticated, "missing credentials", "", 0},
		{"forbidden", fault.Forbidden("App Is Disabled"), fault.KindForbidden, "App Is Disabled", "", 0},
		{"precondition", fault.Precondition("no redirect URI"), fault.KindPrecondition, "no redirect URI", "", 0},
		{"unavailable", fault.Unavailable(5*time.Second, "mail is down"), fault.KindUnavailable, "mail is down", "", 5 * time.Second},
		{"exhausted", fault.Exhausted(time.Hour, "limit reached"), fault.KindExhausted, "limit reached", "", time.Hour},
		{"negative retry-after means unknown", fault.Exhausted(-time.Second, "limit"), fault.KindExhausted, "limit", "", 0},
		{"internal shows only the generic message", fault.Internal(errors.New("dsn=postgres://u:p@h")), fault.KindInternal, fault.InternalMessage, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.err
			if f.Kind() != tt.kind || f.Message() != tt.message || f.Field() != tt.field || f.RetryAfter() != tt.retryAfter {
				t.Fatalf("got kind %v message %q field %q retry-after %v", f.Kind(), f.Message(), f.Field(), f.RetryAfter())
			}
		})
	}
}

func TestAReasonIsAddedToACopyAndSurvivesWrapping(t *testing.T) {
	base := fault.Invalid("password", "password is too common")
	withReason := base.WithReason("common").Wrap(errors.New("sentinel"))
	if withReason.Reason() != "common" || withReason.Field() != "password" || withReason.Message() != base.Message() {
		t.Fatalf("got field %q reason %q message %q", withReason.Field(), withReason.Reason(), withReason.Message())
	}
	if base.Reason() != "" {
		t.Errorf("WithReason changed the original: reason %q", base.Reason())
	}
}

func TestInternalCauseReachesLogsAndErrorsIsButNotTheMessage(t *testing.T) {
	cause := fmt.Errorf("create tenant: %w", context.DeadlineExceeded)
	f := fault.Internal(cause)
	if !errors.Is(f, context.DeadlineExceeded) {
		t.Error("errors.Is does not reach the cause")
	}
	if !strings.Contains(f.Error(), "create tenant") {
		t.Errorf("Error() = %q, want the cause for the log", f.Error())
	}
	if strings.Contains(f.Message(), "tenant") {
		t.Errorf("Message() = %q leaks the cause", f.Message())
	}
}

func TestAsFindsTheOutermostFaultThroughWrapping(t *testing.T) {
	sentinel := fault.NotFound("not found")
	precise := fault.NotFound("User not found").Wrap(sentinel)
	err := fmt.Errorf("get user: %w", precise)

	f, ok := fault.As(err)
	if !ok || f.Message() != "User not found" {
		t.Fatalf("As = %v, %v; want the outer fault", f, ok)
	}
	if !errors.Is(err, sentinel) {
		t.Error("a wrapped sentinel is not found by errors.Is")
	}
	if !fault.Is(err, fault.KindNotFound) || fault.Is(err, fault.KindInvalid) {
		t.Error("Is does not report the outer fault's kind")
	}
	if _, ok := fault.As(errors.New("plain")); ok {
		t.Error("As found a fault in a plain error")
	}
}

func TestZeroKindIsInternal(t *testing.T) {
	var k fault.Kind
	if k != fault.KindInternal || k.String() != "internal" {
		t.Fatalf("zero kind = %v", k)
	}
}
