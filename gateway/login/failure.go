package login

import (
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/apierr"
)

// The page's messages. They are fixed texts chosen by outcome: the backend's error text is never
// shown, so nothing tells a visitor whether an email address has an account.
const (
	msgBadLink            = "This sign-in link is not valid. Go back to the application and start again."
	msgBadRequest         = "The request could not be processed. Go back to the application and start again."
	msgInternal           = "Something went wrong on our side. Please try again in a moment."
	msgExpired            = "The form expired. Please try again."
	msgMissingCredentials = "Enter your email address and password."
	msgBadCredentials     = "The email address or password is not correct."
	msgForbidden          = "This account cannot sign in to this application."
	msgTooMany            = "Too many attempts. Please wait a few minutes and try again."
	msgBadEmail           = "Enter a valid email address."
	msgBadPassword        = "Choose a different password: this one does not meet the password rules."
	msgSignUpFailed       = "We could not create an account with these details. If you already have one, sign in instead."
	msgSignInFailed       = "We could not sign you in with these details. Please try again."
)

// failure is how the page answers a failed call: HTTP status and the message shown.
type failure struct {
	status  int
	message string
}

// describeFailure maps a failed DescribeLogin. Unknown or disabled app, unregistered redirect URI
// and malformed parameters are all the link's fault and get one answer, so a link cannot be used
// to probe which apps exist.
func describeFailure(err error) failure {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated:
		return failure{status: http.StatusBadRequest, message: msgBadLink}
	default:
		return failure{status: http.StatusInternalServerError, message: msgInternal}
	}
}

// submitFailure maps a failed SignUp or SignIn.
func submitFailure(err error, signUp bool) failure {
	st := status.Convert(err)
	switch st.Code() {
	case codes.Unauthenticated:
		return failure{status: http.StatusUnauthorized, message: msgBadCredentials}
	case codes.PermissionDenied:
		return failure{status: http.StatusForbidden, message: msgForbidden}
	case codes.ResourceExhausted:
		return failure{status: http.StatusTooManyRequests, message: msgTooMany}
	case codes.InvalidArgument:
		// The field is safe to act on (it names an input, not an account); the text is not shown.
		switch apierr.Field(st) {
		case "email":
			return failure{status: http.StatusBadRequest, message: msgBadEmail}
		case "password":
			if signUp {
				return failure{status: http.StatusBadRequest, message: msgBadPassword}
			}
		}
	case codes.NotFound, codes.AlreadyExists, codes.FailedPrecondition, codes.OutOfRange:
	default:
		return failure{status: http.StatusInternalServerError, message: msgInternal}
	}
	if signUp {
		return failure{status: http.StatusBadRequest, message: msgSignUpFailed}
	}
	return failure{status: http.StatusBadRequest, message: msgSignInFailed}
}
