package login

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/grpcx"
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
	msgUnavailable        = "This service is temporarily unavailable. Please try again in a moment."
	msgBadEmail           = "Enter a valid email address."
	msgBadName            = "Enter your name without control characters."
	// msgBadPasswordCharacters is shown for sign-in and sign-up alike: it says nothing about an
	// account, only about the characters the form sent.
	msgBadPasswordCharacters = "The password contains characters that cannot be used (control characters)."
	msgBadPassword           = "Choose a different password: this one does not meet the password rules."
	msgSignUpFailed          = "We could not create an account with these details. If you already have one, sign in instead."
	msgSignInFailed          = "We could not sign you in with these details. Please try again."
	// msgCodeInvalid and msgVerificationInvalid are the one answer to every code or link that
	// cannot be used (wrong, expired, used, replaced by a newer mail, never sent): telling them
	// apart would tell whether the address has an account.
	msgCodeInvalid         = "This code is not correct or no longer valid. Check the newest mail, or send a new one."
	msgVerificationInvalid = "This link or code is no longer valid. Sign in again to get a new mail."
	msgResent              = "If the address can be used here, a new mail is on its way. Only its link and code work now."
)

// failure is how the page answers a failed call: HTTP status, the message shown and, for a limit
// reached or a backend unavailable, how long to wait (the Retry-After header; 0 sends none).
type failure struct {
	status     int
	message    string
	retryAfter time.Duration
}

// SetRetryAfter sets Retry-After to d in whole seconds, rounded up so a client never retries too
// early; d <= 0 sets nothing. The JSON edge answers with it too.
func SetRetryAfter(h http.Header, d time.Duration) {
	if d > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10))
	}
}

// unavailable is the answer while a backend is down or overloaded: 503 with its retry hint.
func unavailable(st *status.Status) failure {
	return failure{status: http.StatusServiceUnavailable, message: msgUnavailable, retryAfter: grpcx.RetryAfterOf(st)}
}

// describeFailure maps a failed DescribeLogin. Unknown or disabled app, unregistered redirect URI
// and malformed parameters are all the link's fault and get one answer, so a link cannot be used
// to probe which apps exist.
func describeFailure(err error) failure {
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated:
		return failure{status: http.StatusBadRequest, message: msgBadLink}
	case codes.Unavailable:
		return unavailable(st)
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
		return failure{status: http.StatusTooManyRequests, message: msgTooMany, retryAfter: grpcx.RetryAfterOf(st)}
	case codes.Unavailable:
		return unavailable(st)
	case codes.InvalidArgument:
		// The field is safe to act on (it names an input, not an account); the text is not shown.
		switch grpcx.FieldOf(st) {
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
