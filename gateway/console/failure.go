package console

import (
	"errors"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/pkg/grpcx"
)

// errNoSession is a sign-in answer without a usable token and expiry.
var errNoSession = errors.New("the sign-in answered no token with an expiry")

// The console's messages (keys of pkg/locale's catalog). The backend's own text is never shown.
const (
	msgBadRequest     = "console.error.badRequest"
	msgBadField       = "console.error.badField"
	msgNotAllowed     = "console.error.notAllowed"
	msgNotFound       = "console.error.notFound"
	msgConflict       = "console.error.conflict"
	msgExpired        = "console.error.expired"
	msgBadCredentials = "console.error.badCredentials"
	msgBadCode        = "console.error.badCode"
	msgBadPasskey     = "console.error.badPasskey"
	msgBadInvitation  = "console.error.badInvitation"
	msgSessionEnded   = "console.error.sessionEnded"
	msgTooMany        = "login.error.tooMany"
	msgInternal       = "page.error.internal"
	msgUnavailable    = "page.error.unavailable"
)

// failure is how a page answers a refused call: the status, the message shown, the field the
// backend named (shown beside the message) and, for a limit or an outage, how long to wait.
type failure struct {
	status     int
	message    string
	field      string
	retryAfter time.Duration
}

// failureOf maps a failed gRPC call to what the member is told. PermissionDenied is the member's
// project lacking the right (or another project's app); a refused value names its field. ours
// reports whether the failure is Berth's (logged at error) rather than the member's.
func failureOf(err error) (f failure, ours bool) {
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.OutOfRange:
		return failure{status: http.StatusBadRequest, message: msgBadField, field: grpcx.FieldOf(st)}, false
	case codes.PermissionDenied:
		return failure{status: http.StatusForbidden, message: msgNotAllowed}, false
	case codes.NotFound:
		return failure{status: http.StatusNotFound, message: msgNotFound}, false
	case codes.AlreadyExists, codes.FailedPrecondition, codes.Aborted:
		return failure{status: http.StatusConflict, message: msgConflict, field: grpcx.FieldOf(st)}, false
	case codes.ResourceExhausted:
		return failure{status: http.StatusTooManyRequests, message: msgTooMany, retryAfter: grpcx.RetryAfterOf(st)}, false
	case codes.Unavailable:
		return failure{status: http.StatusServiceUnavailable, message: msgUnavailable, retryAfter: grpcx.RetryAfterOf(st)}, true
	case codes.Unauthenticated:
		return failure{status: http.StatusUnauthorized, message: msgSessionEnded}, false
	}
	return failure{status: http.StatusInternalServerError, message: msgInternal}, true
}

// signInFailure maps a refused sign-in step: a wrong address, password or code is one answer,
// so the page tells nobody which addresses have an account.
func signInFailure(err error, wrong string) (failure, bool) {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unauthenticated, codes.NotFound, codes.PermissionDenied, codes.FailedPrecondition:
		return failure{status: http.StatusUnauthorized, message: wrong}, false
	}
	return failureOf(err)
}

// passwordMessage is the text for a refused invitation form: the password rule identity names
// (the hosted login page's texts), else the refused field's general message.
func passwordMessage(err error, f failure) string {
	st := status.Convert(err)
	if grpcx.FieldOf(st) == "password" {
		return login.PasswordRuleMessage(grpcx.ReasonOf(st))
	}
	return f.message
}
