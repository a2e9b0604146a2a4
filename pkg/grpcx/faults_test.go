package grpcx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/reqid"
)

func TestFaultsBecomeStatusesWithTheirDetails(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		code       codes.Code
		message    string
		field      string
		retryAfter time.Duration
	}{
		{"invalid names the field", fault.Invalid("email", "email must be valid"), codes.InvalidArgument, "email must be valid", "email", 0},
		{"invalid without a field", fault.Invalid("", "could not sign up"), codes.InvalidArgument, "could not sign up", "", 0},
		{"wrapped invalid", fmt.Errorf("update user: %w", fault.InvalidField("user.email", "is taken")), codes.InvalidArgument, "user.email is taken", "user.email", 0},
		{"not found", fault.NotFound("User not found"), codes.NotFound, "User not found", "", 0},
		{"unauthenticated", fault.Unauthenticated("missing credentials"), codes.Unauthenticated, "missing credentials", "", 0},
		{"forbidden", fault.Forbidden("App Is Disabled"), codes.PermissionDenied, "App Is Disabled", "", 0},
		{"precondition", fault.Precondition("no redirect URI"), codes.FailedPrecondition, "no redirect URI", "", 0},
		{"unavailable with retry-after", fault.Unavailable(30*time.Second, "mail is down"), codes.Unavailable, "mail is down", "", 30 * time.Second},
		{"unavailable without retry-after", fault.Unavailable(0, "not configured"), codes.Unavailable, "not configured", "", 0},
		{"exhausted with retry-after", fault.Exhausted(15*time.Minute, "too many attempts"), codes.ResourceExhausted, "too many attempts", "", 15 * time.Minute},
		{"a fault wrapping a context error keeps its kind", fault.Unavailable(0, "down").Wrap(context.DeadlineExceeded), codes.Unavailable, "down", "", 0},
		{"internal hides the cause", fault.Internal(errors.New("dsn=postgres://u:p@db")), codes.Internal, "Internal Server Error", "", 0},
		{"plain error hides its text", errors.New("dial tcp 10.0.0.7:5432: refused"), codes.Internal, "Internal Server Error", "", 0},
		{"canceled caller", fmt.Errorf("list users: %w", context.Canceled), codes.Canceled, context.Canceled.Error(), "", 0},
		{"internal caused by a canceled caller", fault.Internal(context.Canceled), codes.Canceled, context.Canceled.Error(), "", 0},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, context.DeadlineExceeded.Error(), "", 0},
		{"downstream status passes through", status.Error(codes.Unavailable, "identity is down"), codes.Unavailable, "identity is down", "", 0},
		{"downstream internal stays generic", status.Error(codes.Internal, "pq: relation users does not exist"), codes.Internal, "Internal Server Error", "", 0},
		{"downstream unknown stays generic", status.Error(codes.Unknown, "panic: secret"), codes.Internal, "Internal Server Error", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := StatusOf(tt.err)
			if st.Code() != tt.code || st.Message() != tt.message {
				t.Fatalf("status = %v %q, want %v %q", st.Code(), st.Message(), tt.code, tt.message)
			}
			if got := FieldOf(st); got != tt.field {
				t.Errorf("field = %q, want %q", got, tt.field)
			}
			if got := RetryAfterOf(st); got != tt.retryAfter {
				t.Errorf("retry-after = %v, want %v", got, tt.retryAfter)
			}
		})
	}
}

func TestAnInvalidFaultsReasonReachesTheCallerBesideItsField(t *testing.T) {
	err := fmt.Errorf("sign up: %w", fault.Invalid("password", "password is too common").WithReason("common"))
	st := StatusOf(err)
	if FieldOf(st) != "password" || ReasonOf(st) != "common" {
		t.Fatalf("field %q reason %q, want password and common", FieldOf(st), ReasonOf(st))
	}
	if got := ReasonOf(StatusOf(fault.Invalid("email", "email must be valid"))); got != "" {
		t.Errorf("a fault without a reason answers reason %q", got)
	}
}

func TestFaultsLogTheHiddenCauseWithTheRequestID(t *testing.T) {
	var logs bytes.Buffer
	log := logx.New(&logs, "debug")
	ctx := reqid.With(context.Background(), "req-42")
	_, err := Faults(log)(ctx, nil, info, func(context.Context, any) (any, error) {
		return nil, fault.Internal(errors.New("password=hunter2"))
	})
	if st := status.Convert(err); st.Code() != codes.Internal || strings.Contains(st.Message(), "hunter2") {
		t.Fatalf("status = %v", st)
	}
	line := logs.String()
	for _, want := range []string{`"level":"ERROR"`, "hunter2", `"request_id":"req-42"`, info.FullMethod} {
		if !strings.Contains(line, want) {
			t.Errorf("log %s lacks %s", line, want)
		}
	}
}

func TestFaultsDoNotLogWhatTheCallerIsShown(t *testing.T) {
	for name, err := range map[string]error{
		"fault":             fault.Invalid("email", "bad"),
		"canceled":          context.Canceled,
		"downstream status": status.Error(codes.Internal, "logged where it arose"),
	} {
		var logs bytes.Buffer
		_, _ = Faults(logx.New(&logs, "debug"))(context.Background(), nil, info, func(context.Context, any) (any, error) { return nil, err })
		if logs.Len() != 0 {
			t.Errorf("%s: logged %s", name, logs.String())
		}
	}
}

func TestAccessLogRecordsCanceledCallsAtDebugOnly(t *testing.T) {
	tests := []struct {
		err   error
		level string
	}{
		{StatusOf(context.Canceled).Err(), `"level":"DEBUG"`},
		{StatusOf(fault.NotFound("x")).Err(), `"level":"INFO"`},
		{StatusOf(errors.New("boom")).Err(), `"level":"INFO"`},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		_, _ = accessLog(logx.New(&logs, "debug"))(context.Background(), nil, info, func(context.Context, any) (any, error) { return nil, tt.err })
		if !strings.Contains(logs.String(), tt.level) || strings.Contains(logs.String(), "ERROR") {
			t.Errorf("%v: log %s, want %s", status.Code(tt.err), logs.String(), tt.level)
		}
	}
}

func TestEachRequestMakesOneInfoLineWhereItEntersBerth(t *testing.T) {
	tests := []struct {
		name  string
		md    metadata.MD
		level string
	}{
		{"a direct gRPC caller", metadata.Pairs("x-api-key", "k"), `"level":"INFO"`},
		{"a call the REST edge forwarded (it logged the request)", metadata.Pairs("x-forwarded-host", "berth.test"), `"level":"DEBUG"`},
		{"a call of another Berth service (a step of a logged request)", metadata.Pairs(authn.MDServiceToken, "t"), `"level":"DEBUG"`},
		{"a process provisioning itself at start-up (the demo seed)", metadata.Pairs(MDSetup, "1", "x-api-key", "k"), `"level":"DEBUG"`},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		ctx := metadata.NewIncomingContext(context.Background(), tt.md)
		_, _ = accessLog(logx.New(&logs, "debug"))(ctx, nil, info, func(context.Context, any) (any, error) { return nil, nil })
		if !strings.Contains(logs.String(), tt.level) {
			t.Errorf("%s: log %s, want %s", tt.name, logs.String(), tt.level)
		}
	}
}

func TestSetupInterceptorMarksTheCallsItSends(t *testing.T) {
	var sent metadata.MD
	err := SetupInterceptor()(context.Background(), "/s/M", nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		sent, _ = metadata.FromOutgoingContext(ctx)
		return nil
	})
	if err != nil || len(sent.Get(MDSetup)) != 1 {
		t.Fatalf("sent %v, %v; want the %s marker", sent, err, MDSetup)
	}
}

func TestAccessLinesGiveTheirDurationInMilliseconds(t *testing.T) {
	var logs bytes.Buffer
	_, _ = accessLog(logx.New(&logs, "info"))(context.Background(), nil, info, func(context.Context, any) (any, error) { return nil, nil })
	if !strings.Contains(logs.String(), `"duration_ms":`) {
		t.Fatalf("access line %s has no duration_ms", logs.String())
	}
}

func TestStreamFaultsMapTheHandlersError(t *testing.T) {
	err := StreamFaults(logx.New(&bytes.Buffer{}, "error"))(nil, &contextStream{ctx: context.Background()}, &grpc.StreamServerInfo{FullMethod: "/s/M"},
		func(any, grpc.ServerStream) error { return fault.Forbidden("no") })
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("code = %v", status.Code(err))
	}
}

func TestFaultsWarnAboutUnavailableDependencies(t *testing.T) {
	var logs bytes.Buffer
	_, _ = Faults(logx.New(&logs, "debug"))(context.Background(), nil, info, func(context.Context, any) (any, error) {
		return nil, fmt.Errorf("%w: identity: connection refused", fault.Unavailable(0, "Service temporarily unavailable"))
	})
	if !strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), "connection refused") {
		t.Fatalf("log = %s", logs.String())
	}
}

func TestDownstreamErrorsBecomeThisServicesAnswer(t *testing.T) {
	notFound := fault.NotFound("Tenant not found")
	cases := []struct {
		code codes.Code
		kind fault.Kind
	}{
		{codes.NotFound, fault.KindNotFound},
		{codes.InvalidArgument, fault.KindNotFound},
		{codes.Unavailable, fault.KindUnavailable},
		{codes.DeadlineExceeded, fault.KindUnavailable},
		{codes.ResourceExhausted, fault.KindUnavailable},
		{codes.Unauthenticated, fault.KindInternal},
		{codes.Internal, fault.KindInternal},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			err := Downstream(status.Error(tc.code, "x"), "get tenant", notFound)
			if !fault.Is(err, tc.kind) {
				t.Fatalf("Downstream(%v) = %v, want kind %v", tc.code, err, tc.kind)
			}
		})
	}
}

// A call whose caller hung up (or ran out of time) while it ran fails because of that: the store's
// error for the statement PostgreSQL cancelled is answered as Canceled (DeadlineExceeded) and not
// logged as a server fault; a fault the service named still answers as itself.
func TestAnInternalFailureOfACallWhoseCallerLeftIsTheCallersCancellation(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		want codes.Code
	}{
		{"canceled caller, statement canceled by the server", canceled, fault.Internal(errors.New("ERROR: canceling statement due to user request (SQLSTATE 57014)")), codes.Canceled},
		{"expired caller, internal failure", expired, fault.Internal(errors.New("conn busy")), codes.DeadlineExceeded},
		{"canceled caller, a fault the service named", canceled, fault.NotFound("tenant not found"), codes.NotFound},
		{"caller still there, internal failure", context.Background(), fault.Internal(errors.New("conn busy")), codes.Internal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			_, err := Faults(logx.New(&logs, "debug"))(tc.ctx, nil, info, func(context.Context, any) (any, error) { return nil, tc.err })
			if got := status.Code(err); got != tc.want {
				t.Errorf("code = %v, want %v", got, tc.want)
			}
			if errored := strings.Contains(logs.String(), `"level":"ERROR"`); errored != (tc.want == codes.Internal) {
				t.Errorf("logged at error: %v, want %v: %s", errored, tc.want == codes.Internal, logs.String())
			}
		})
	}
}
