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

// The page's messages: keys of pkg/locale's catalog, shown in the page's language. They are fixed
// texts chosen by outcome: the backend's error text is never shown, so nothing tells a visitor
// whether an email address has an account.
const (
	msgBadLink            = "login.error.badLink"
	msgBadRequest         = "login.error.badRequest"
	msgInternal           = "page.error.internal"
	msgExpired            = "login.error.expired"
	msgMissingCredentials = "login.error.missing"
	msgBadCredentials     = "login.error.badCredentials"
	msgForbidden          = "login.error.forbidden"
	msgTooMany            = "login.error.tooMany"
	msgUnavailable        = "page.error.unavailable"
	msgBadEmail           = "login.error.badEmail"
	msgBadName            = "login.error.badName"
	// msgBadPasswordCharacters is shown for sign-in and sign-up alike: it says nothing about an
	// account, only about the characters the form sent.
	msgBadPasswordCharacters = "login.error.badPasswordCharacters"
	msgBadPassword           = "login.error.badPassword"
	msgSignUpFailed          = "login.error.signUpFailed"
	msgSignInFailed          = "login.error.signInFailed"
	// msgCodeInvalid and msgVerificationInvalid are the one answer to every code or link that
	// cannot be used (wrong, expired, used, replaced by a newer mail, never sent): telling them
	// apart would tell whether the address has an account.
	msgCodeInvalid         = "verify.error.code"
	msgVerificationInvalid = "verify.error.link"
	msgResent              = "verify.resent"
)

// The password rules, one message each, shown on sign-up for the rule identity names as broken.
const (
	msgPasswordLength = "login.error.passwordLength"
	msgPasswordBlank  = "login.error.passwordBlank"
	msgPasswordCommon = "login.error.passwordCommon"
	msgPasswordEmail  = "login.error.passwordEmail"
)

// failure is how the page answers a failed call: HTTP status, the message shown (its key) and, for a limit
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
				return failure{status: http.StatusBadRequest, message: PasswordRuleMessage(grpcx.ReasonOf(st))}
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

// passwordRuleMessages maps the reasons identity gives a refused password (services/identity's
// password.Reason*) to the page's message for that rule; a reason it does not know gets the
// general one. Invalid UTF-8 is the characters text the form check shows too.
var passwordRuleMessages = map[string]string{
	"characters": msgBadPasswordCharacters,
	"length":     msgPasswordLength,
	"blank":      msgPasswordBlank,
	"common":     msgPasswordCommon,
	"email":      msgPasswordEmail,
}

// PasswordRuleMessage is the text (catalog key) for a password refused for reason; the reset
// pages (gateway/recovery) show it too.
func PasswordRuleMessage(reason string) string {
	if m, ok := passwordRuleMessages[reason]; ok {
		return m
	}
	return msgBadPassword
}
