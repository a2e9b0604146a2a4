package edge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/grpcx"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

// failure is an error answer before it is rendered in a family's shape.
type failure struct {
	status     int           // HTTP status
	message    string        // caller-safe reason; the /v1 family shows it
	validation string        // the field or rule that failed; the /api/v1 family shows it
	retryAfter time.Duration // sent as Retry-After when set (limits reached, services unavailable)
}

// internalMessage is the only text a 5xx answer ever shows: the cause goes to the log.
const internalMessage = "Internal Server Error"

// httpStatus maps a gRPC code to the four statuses the contract allows. Everything the caller can
// fix by changing the request is 400 — including NotFound, which the contract answers like bad
// input so ids cannot be probed, FailedPrecondition (the resource is not in a state that allows
// the request, e.g. no running subscription) and ResourceExhausted (a limit the caller reached,
// such as route 23's daily invites: the contract has no 429, and waiting is a change the caller
// can make). Unavailable stays 500 like every other server-side failure.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.InvalidArgument, codes.NotFound, codes.OutOfRange, codes.FailedPrecondition, codes.AlreadyExists, codes.ResourceExhausted:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	default:
		return http.StatusInternalServerError
	}
}

// failureOf turns an error reaching the error handler into a failure. Statuses at or above 500 never
// carry the error's text.
func failureOf(err error) failure {
	var f failure
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		// The runtime rejects some requests before any RPC (a malformed escape in the path) with a
		// fixed HTTP status and its own, caller-safe message.
		st := status.Convert(hse.Err)
		f = failure{status: hse.HTTPStatus, message: st.Message()}
	} else {
		st := status.Convert(err)
		f = failure{status: httpStatus(st.Code()), message: st.Message(), validation: grpcx.FieldOf(st)}
		if st.Code() == codes.ResourceExhausted || st.Code() == codes.Unavailable {
			f.retryAfter = grpcx.RetryAfterOf(st)
		}
	}
	if f.status >= http.StatusInternalServerError {
		f = failure{status: f.status, message: internalMessage, retryAfter: f.retryAfter}
	}
	return f
}

// v1Failure is the /v1 error envelope, keys in the documented order.
type v1Failure struct {
	Success bool    `json:"success"` // always false
	Error   string  `json:"error"`
	Message *string `json:"message"` // always null on failure
	Data    *string `json:"data"`    // always null on failure
}

func renderV1(f failure) v1Failure {
	return v1Failure{Error: f.message}
}

// apiFailure is the /api/v1 error body.
type apiFailure struct {
	Errors []apiError `json:"errors"`
}

type apiError struct {
	Validation string `json:"validation"`
	Code       string `json:"code"`
	Message    string `json:"message"`
}

// renderAPI renders the /api/v1 body: code and message are fixed per status by the contract; 404
// and 405 (no route matched) reuse the bad-request code with the status text as message.
func renderAPI(f failure) apiFailure {
	e := apiError{Validation: f.validation, Code: "[E4000]", Message: "Bad Request"}
	switch {
	case f.status == http.StatusUnauthorized:
		e.Code, e.Message = "[E4010]", "Unauthorized Token"
	case f.status == http.StatusForbidden:
		e.Code, e.Message = "[E4030]", "App Is Disabled"
	case f.status == http.StatusNotFound, f.status == http.StatusMethodNotAllowed:
		e.Message = http.StatusText(f.status)
	case f.status >= http.StatusInternalServerError:
		e = apiError{Code: "[E0000]", Message: internalMessage}
	}
	return apiFailure{Errors: []apiError{e}}
}

// familyOfPath is the fallback when no RPC was resolved (unknown path, wrong method, a request
// rejected by the middleware): /api/... is the current family, anything else the older one.
func familyOfPath(path string) edgev1.Family {
	if path == "/api" || strings.HasPrefix(path, "/api/") {
		return edgev1.Family_FAMILY_API
	}
	return edgev1.Family_FAMILY_V1
}

// familyOf is the family of the resolved RPC's route option, which wins over the path (route 8
// lives under /api/v1 but answers in the /v1 family).
func familyOf(ctx context.Context, r *http.Request) edgev1.Family {
	if _, rt, ok := routeOf(ctx); ok && rt.GetFamily() != edgev1.Family_FAMILY_UNSPECIFIED {
		return rt.GetFamily()
	}
	return familyOfPath(r.URL.Path)
}

// writeFailure renders f in family fam.
func writeFailure(w http.ResponseWriter, fam edgev1.Family, f failure) {
	// A response header the runtime may have prepared for a success must not survive into an error.
	w.Header().Del("Trailer")
	w.Header().Del("Transfer-Encoding")
	login.SetRetryAfter(w.Header(), f.retryAfter)
	writeJSON(w, f.status, render(fam, f))
}

// render is f's body in family fam.
func render(fam edgev1.Family, f failure) any {
	if fam == edgev1.Family_FAMILY_API {
		return renderAPI(f)
	}
	return renderV1(f)
}

// errorHandler renders every error of a resolved or attempted RPC. 5xx causes are logged with the
// request id; the caller only ever sees the generic message.
func errorHandler(log *slog.Logger) runtime.ErrorHandlerFunc {
	return func(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
		resolved(ctx)
		f := failureOf(err)
		if in := inputOf(r.Context()); in != nil && !in.invoked {
			// The runtime refused the request while building it (body, query, path parameters):
			// answer what the edge recorded, or keep only the parameter the runtime's text names.
			var hse *runtime.HTTPStatusError
			switch {
			case in.refused != nil:
				f = *in.refused
			case !errors.As(err, &hse) && status.Code(err) == codes.InvalidArgument:
				f = runtimeFailure(err)
			}
		}
		if f.status >= http.StatusInternalServerError && !clientGone(r) {
			method, _ := runtime.RPCMethod(ctx)
			log.ErrorContext(ctx, "request failed",
				slog.String("rpc", method),
				slog.String("error", err.Error()))
		}
		if _, rt, ok := routeOf(ctx); ok {
			setNoStore(w.Header(), rt) // a failed token exchange is no more cacheable than a success
		}
		corsHeaders(ctx, w) // a page allowed to call may read why its call failed
		writeFailure(w, familyOf(ctx, r), f)
	}
}

// routingErrorHandler answers requests no route matched (404 unknown path, 405 wrong method, 400
// malformed path) in the family of the path.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	writeFailure(w, familyOfPath(r.URL.Path), failure{status: code, message: http.StatusText(code)})
}
