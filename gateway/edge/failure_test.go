package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

func TestFailureOfMapsCodesAndHidesServerFaults(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want failure
	}{
		{"invalid with field", wire(fault.Invalid("from", "from must be YYYY-MM-DD")), failure{400, "from must be YYYY-MM-DD", "from", 0}},
		{"invalid without field", wire(fault.Invalid("", "bad body")), failure{400, "bad body", "", 0}},
		{"not found", wire(fault.NotFound("tenant not found")), failure{400, "tenant not found", "", 0}},
		{"out of range", status.Error(codes.OutOfRange, "span over 366 days"), failure{400, "span over 366 days", "", 0}},
		{"failed precondition", status.Error(codes.FailedPrecondition, "no subscription"), failure{400, "no subscription", "", 0}},
		{"already exists", status.Error(codes.AlreadyExists, "duplicate"), failure{400, "duplicate", "", 0}},
		{"unauthenticated", wire(fault.Unauthenticated("invalid token")), failure{401, "invalid token", "", 0}},
		{"permission denied", wire(fault.Forbidden("app is disabled")), failure{403, "app is disabled", "", 0}},
		{"internal", wire(fault.Internal(errors.New("dsn=postgres://u:p@h"))), failure{500, internalMessage, "", 0}},
		{"unknown plain error", errors.New("dial tcp 10.0.0.1:5432: refused"), failure{500, internalMessage, "", 0}},
		{"unavailable", status.Error(codes.Unavailable, "connection refused"), failure{500, internalMessage, "", 0}},
		{"deadline exceeded", status.Error(codes.DeadlineExceeded, "ctx"), failure{500, internalMessage, "", 0}},
		{"resource exhausted is the caller's limit", status.Error(codes.ResourceExhausted, "daily invite limit reached"), failure{400, "daily invite limit reached", "", 0}},
		{"exhausted with retry-after", wire(fault.Exhausted(90*time.Second, "daily invite limit reached")), failure{400, "daily invite limit reached", "", 90 * time.Second}},
		{"unavailable with retry-after", wire(fault.Unavailable(30*time.Second, "mail is down")), failure{500, internalMessage, "", 30 * time.Second}},
		{"canceled", status.Error(codes.Canceled, "client went away"), failure{500, internalMessage, "", 0}},
		{"runtime rejection keeps its status", &runtime.HTTPStatusError{HTTPStatus: 400, Err: errors.New("malformed escape")}, failure{400, "malformed escape", "", 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failureOf(tt.err); got != tt.want {
				t.Errorf("failureOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRenderAPIUsesTheContractsCodes(t *testing.T) {
	tests := []struct {
		name string
		in   failure
		want apiError
	}{
		{"400 keeps validation", failure{400, "from must be a date", "from", 0}, apiError{"from", "[E4000]", "Bad Request"}},
		{"401", failure{401, "invalid token", "", 0}, apiError{"", "[E4010]", "Unauthorized Token"}},
		{"403", failure{403, "disabled", "", 0}, apiError{"", "[E4030]", "App Is Disabled"}},
		{"404 routing", failure{404, "Not Found", "", 0}, apiError{"", "[E4000]", "Not Found"}},
		{"405 routing", failure{405, "Method Not Allowed", "", 0}, apiError{"", "[E4000]", "Method Not Allowed"}},
		{"500 shows nothing of the failure", failure{500, "leaked?", "field?", 0}, apiError{"", "[E0000]", "Internal Server Error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderAPI(tt.in)
			if len(got.Errors) != 1 || got.Errors[0] != tt.want {
				t.Errorf("renderAPI = %+v, want one error %+v", got, tt.want)
			}
		})
	}
}

// TestAPIFamilyErrorsEndToEndShape renders gRPC errors through the real error handler for a request
// without a resolved RPC under /api/v1 (the path fallback). Routes 1 and 2 will exercise the
// option-driven /api/v1 family end to end once they exist.
func TestAPIFamilyErrorsEndToEndShape(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		validation string
		code, msg  string
	}{
		{"invalid", wire(fault.Invalid("redirect_uri", "redirect_uri is not registered")), 400, "redirect_uri", "[E4000]", "Bad Request"},
		{"not found", wire(fault.NotFound("api key not found")), 400, "", "[E4000]", "Bad Request"},
		{"unauthenticated", wire(fault.Unauthenticated("bad jwt")), 401, "", "[E4010]", "Unauthorized Token"},
		{"permission denied", wire(fault.Forbidden("app disabled")), 403, "", "[E4030]", "App Is Disabled"},
		{"internal", status.Error(codes.Internal, "secret detail"), 500, "", "[E0000]", "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/api/v1/tokens", nil)
			errorHandler(discard)(req.Context(), nil, nil, rec, req, tt.err)
			wantAPIFailure(t, rec, tt.status, tt.validation, tt.code, tt.msg)
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q", got)
			}
		})
	}
}

func TestRoutingErrorInAPIFamily(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusMethodNotAllowed} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodDelete, "/api/v1/tokens", nil)
		routingErrorHandler(req.Context(), nil, nil, rec, req, code)
		wantAPIFailure(t, rec, code, "", "[E4000]", http.StatusText(code))
	}
}

func TestRouteOptionFamilyWinsOverPath(t *testing.T) {
	mux := runtime.NewServeMux()
	annotate := func(t *testing.T, req *http.Request, method string) context.Context {
		t.Helper()
		ctx, err := runtime.AnnotateContext(req.Context(), mux, req, method)
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	tests := []struct {
		name   string
		path   string
		method string // resolved RPC, "" for none
		want   edgev1.Family
	}{
		{"/v1 option under an /api path", "/api/v1/analytics/sign-ins", mGetTenant, edgev1.Family_FAMILY_V1},
		{"no RPC under /api", "/api/v1/tokens", "", edgev1.Family_FAMILY_API},
		{"no RPC under /v1", "/v1/tenants/t1", "", edgev1.Family_FAMILY_V1},
		{"no RPC elsewhere", "/apiary", "", edgev1.Family_FAMILY_V1},
		{"RPC without option falls back to path", "/api/v1/x", "/berth.identity.v1.IdentityInternalService/Nope", edgev1.Family_FAMILY_API},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			ctx := req.Context()
			if tt.method != "" {
				ctx = annotate(t, req, tt.method)
			}
			if got := familyOf(ctx, req); got != tt.want {
				t.Errorf("familyOf = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLimitsAndOutagesSendRetryAfterInBothFamilies(t *testing.T) {
	tests := []struct {
		name       string
		path       string
		err        error
		status     int
		body       string
		retryAfter string
	}{
		{"/v1 limit", "/v1/users/u1/referrals", wire(fault.Exhausted(24*time.Hour, "daily invite limit reached")), 400,
			`{"success":false,"error":"daily invite limit reached","message":null,"data":null}`, "86400"},
		{"/v1 limit without a hint", "/v1/users/u1/referrals", wire(fault.Exhausted(0, "daily invite limit reached")), 400,
			`{"success":false,"error":"daily invite limit reached","message":null,"data":null}`, ""},
		{"/v1 unavailable", "/v1/users/u1/referrals", wire(fault.Unavailable(1500*time.Millisecond, "the invite could not be sent")), 500,
			`{"success":false,"error":"Internal Server Error","message":null,"data":null}`, "2"},
		{"/api/v1 limit", "/api/v1/tokens", wire(fault.Exhausted(15*time.Minute, "too many attempts")), 400,
			`{"errors":[{"validation":"","code":"[E4000]","message":"Bad Request"}]}`, "900"},
		{"/api/v1 unavailable", "/api/v1/tokens", wire(fault.Unavailable(30*time.Second, "down")), 500,
			`{"errors":[{"validation":"","code":"[E0000]","message":"Internal Server Error"}]}`, "30"},
		{"/api/v1 unavailable without a hint", "/api/v1/tokens", status.Error(codes.Unavailable, "connection refused"), 500,
			`{"errors":[{"validation":"","code":"[E0000]","message":"Internal Server Error"}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, tt.path, nil)
			errorHandler(discard)(req.Context(), nil, nil, rec, req, tt.err)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			var got, want any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal([]byte(tt.body), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body = %s, want %s", rec.Body, tt.body)
			}
			if h := rec.Header().Get("Retry-After"); h != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", h, tt.retryAfter)
			}
		})
	}
}
