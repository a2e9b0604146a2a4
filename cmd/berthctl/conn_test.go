package main

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/cmd/berthctl/target"
)

func TestCallErrorsSayTheirCodeInWordsOnOneLine(t *testing.T) {
	l := &lazyConn{service: "identity", target: target.Target{Addrs: map[string]string{"identity": "127.0.0.1:9101"},
		AddrFrom: map[string]string{"identity": ".berth/demo.json"}, TokenFrom: "BERTH_ADMIN_TOKEN"}}
	plain := errors.New("no admin token")
	for _, c := range []struct {
		err  error
		want string
	}{
		{status.Error(codes.NotFound, "App not found"), "not found: App not found"},
		{status.Error(codes.PermissionDenied, "admin token required"), "permission denied: the admin token was refused (token from BERTH_ADMIN_TOKEN)"},
		{status.Error(codes.Unauthenticated, ""), "permission denied: the admin token was refused (token from BERTH_ADMIN_TOKEN)"},
		{status.Error(codes.Unavailable, "connection refused\nretrying"), "unavailable: is berth running? (make run) — identity at 127.0.0.1:9101, from .berth/demo.json"},
		{status.Error(codes.InvalidArgument, "type must be read or write"), "type must be read or write"},
		{status.Error(codes.FailedPrecondition, "the app is disabled"), "the app is disabled"},
		{status.Error(codes.AlreadyExists, "origin added\ntwice"), "already exists: origin added twice"},
		{status.Error(codes.ResourceExhausted, ""), "resource exhausted"},
		{status.Error(codes.DeadlineExceeded, "x"), "timed out: identity at 127.0.0.1:9101 did not answer in time"},
		{plain, "no admin token"},
	} {
		if got := l.describe(c.err); got == nil || got.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.err, got, c.want)
		}
	}
	if l.describe(nil) != nil {
		t.Error("a call that succeeded described as an error")
	}
}
