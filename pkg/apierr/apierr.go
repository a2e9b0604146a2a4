// Package apierr builds the gRPC errors Berth services return. The REST edge maps their codes to the
// two documented error shapes; the field named in Invalid travels as a BadRequest field violation
// and becomes the `validation` member of /api/v1 errors.
//
// Messages are shown to callers as they are, so they must never carry internal detail or secrets.
package apierr

import (
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Invalid reports bad input: field is the field or rule that failed ("" when none applies).
func Invalid(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	st := status.New(codes.InvalidArgument, msg)
	if field != "" {
		if withDetails, err := st.WithDetails(&errdetails.BadRequest{
			FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: msg}},
		}); err == nil {
			st = withDetails
		}
	}
	return st.Err()
}

// NotFound reports a resource that does not exist or belongs to another app. The edge answers both
// the same way so that ids cannot be probed.
func NotFound(format string, args ...any) error {
	return status.Errorf(codes.NotFound, format, args...)
}

// Unauthenticated reports missing or invalid credentials.
func Unauthenticated(format string, args ...any) error {
	return status.Errorf(codes.Unauthenticated, format, args...)
}

// Forbidden reports valid credentials without the right to do this.
func Forbidden(format string, args ...any) error {
	return status.Errorf(codes.PermissionDenied, format, args...)
}

// Internal hides a fault behind a generic message; the cause is for logs only.
func Internal(cause error) error {
	return &internalError{cause: cause}
}

type internalError struct{ cause error }

func (e *internalError) Error() string { return "internal error: " + e.cause.Error() }
func (e *internalError) Unwrap() error { return e.cause }

// GRPCStatus keeps the cause out of the status message that reaches callers.
func (e *internalError) GRPCStatus() *status.Status {
	return status.New(codes.Internal, "Internal Server Error")
}

// Field returns the field named by an Invalid error, or "".
func Field(st *status.Status) string {
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// IsCode reports whether err carries the gRPC code c.
func IsCode(err error, c codes.Code) bool {
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) {
		return s.GRPCStatus().Code() == c
	}
	return status.Code(err) == c
}
