package account

import (
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/grpcx"
)

// The page's messages: keys of pkg/locale's catalog. The backend's text is never shown.
const (
	msgTitle            = "account.error.title"
	msgBadLink          = "account.error.badLink"
	msgSignIn           = "account.error.signIn"
	msgSignedOut        = "account.error.signedOut"
	msgWrongCurrent     = "account.error.wrongCurrent"
	msgMissing          = "account.error.missing"
	msgSessionGone      = "account.error.sessionGone"
	msgGone             = "account.links.gone"
	msgCodeWrong        = "account.mfa.wrongCode"
	msgPasskeyWrong     = "account.mfa.passkeyFailed"
	msgMFAUnavailable   = "account.mfa.unavailable"
	msgTooManyMails     = "account.error.tooManyMails"
	msgSignedOutTitle   = "account.signedOut.title"
	msgSignedOutMessage = "account.signedOut.message"
	// Shared with the login page: the same situations in the same words.
	msgBadRequest     = "login.error.badRequest"
	msgExpired        = "login.error.expired"
	msgTooMany        = "login.error.tooMany"
	msgBadPassword    = "login.error.badPassword"
	msgInternal       = "page.error.internal"
	msgUnavailable    = "page.error.unavailable"
	msgPasswordChars  = "login.error.badPasswordCharacters"
	msgPasswordLength = "login.error.passwordLength"
	msgPasswordBlank  = "login.error.passwordBlank"
	msgPasswordCommon = "login.error.passwordCommon"
	msgPasswordEmail  = "login.error.passwordEmail"
)

// The notices a finished action sends the browser back with (the link's notice parameter).
const (
	noticePassword = "password"
	noticeEnded    = "ended"
	noticeEndedAll = "endedAll"
	noticePasskey  = "passkey"
	noticeResent   = "resent"
	// A link from the page returns with identity's notice (app.NoticeLinked, app.NoticeLinkTaken).
	noticeLinked        = "linked"
	noticeLinkTaken     = "linkTaken"
	noticeUnlinked      = "unlinked"
	noticeFactorRemoved = "factorRemoved"
)

// noticeKey is the catalog key of a notice, "" for none or an unknown one: the link is anyone's
// to edit, so only the page's own notices are shown.
func noticeKey(n string) string {
	switch n {
	case noticePassword, noticeEnded, noticeEndedAll, noticeResent, noticePasskey, noticeLinked, noticeUnlinked, noticeFactorRemoved, noticeLinkTaken:
		return "account.notice." + n
	}
	return ""
}

// noticeIsAlert reports whether a notice says something did not happen: the page shows it as an
// alert rather than a confirmation.
func noticeIsAlert(n string) bool { return n == noticeLinkTaken }

// methodRefusals are the page's texts of the sign-in-method rules identity refused an action by
// (the reason of its refusal of the slot or kind).
var methodRefusals = map[string]string{
	"last_way": "account.links.lastWay",
	"required": "account.mfa.lastFactor",
	"linked":   "account.links.slotLinked",
}

// failure is how the page answers a failed call: status, message key and Retry-After.
type failure struct {
	status     int
	message    string
	retryAfter time.Duration
}

// backendFailure maps a failed describe or read: the link's fault is a bad link, a backend down
// is 503, the rest is ours.
func backendFailure(err error) failure {
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated:
		return failure{status: http.StatusBadRequest, message: msgBadLink}
	case codes.Unavailable:
		return failure{status: http.StatusServiceUnavailable, message: msgUnavailable, retryAfter: grpcx.RetryAfterOf(st)}
	case codes.ResourceExhausted:
		return failure{status: http.StatusTooManyRequests, message: msgTooMany, retryAfter: grpcx.RetryAfterOf(st)}
	}
	return failure{status: http.StatusInternalServerError, message: msgInternal}
}

// passwordRules maps the reason identity gives a refused new password to the login page's text.
var passwordRules = map[string]string{
	"characters": msgPasswordChars,
	"length":     msgPasswordLength,
	"blank":      msgPasswordBlank,
	"common":     msgPasswordCommon,
	"email":      msgPasswordEmail,
}

// actionFailure maps a refused action to the page's message.
func actionFailure(action string, err error) failure {
	st := status.Convert(err)
	switch {
	case st.Code() == codes.ResourceExhausted && action == actionResend:
		// The verification mails' own limits (per address and per client address), not a
		// password's attempts: say which.
		return failure{status: http.StatusTooManyRequests, message: msgTooManyMails, retryAfter: grpcx.RetryAfterOf(st)}
	case st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "current_password":
		return failure{status: http.StatusBadRequest, message: msgWrongCurrent}
	case st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "password":
		if m, ok := passwordRules[grpcx.ReasonOf(st)]; ok {
			return failure{status: http.StatusBadRequest, message: m}
		}
		return failure{status: http.StatusBadRequest, message: msgBadPassword}
	case st.Code() == codes.NotFound && (action == actionUnlink || action == actionRemoveFactor):
		return failure{status: http.StatusNotFound, message: msgGone}
	case st.Code() == codes.NotFound:
		return failure{status: http.StatusNotFound, message: msgSessionGone}
	case st.Code() == codes.InvalidArgument && (grpcx.FieldOf(st) == "slot" || grpcx.FieldOf(st) == "kind") && methodRefusals[grpcx.ReasonOf(st)] != "":
		return failure{status: http.StatusConflict, message: methodRefusals[grpcx.ReasonOf(st)]}
	case st.Code() == codes.InvalidArgument && action == actionLink && grpcx.FieldOf(st) == "provider":
		// The slot was emptied since the page showed it.
		return failure{status: http.StatusConflict, message: msgMFAUnavailable}
	case st.Code() == codes.FailedPrecondition:
		// A second-factor action the app's policy or the user's factors do not allow (an
		// enrolment beside an enrolled factor, codes without a factor): the page shows what is.
		return failure{status: http.StatusConflict, message: msgMFAUnavailable}
	case st.Code() == codes.InvalidArgument:
		return failure{status: http.StatusBadRequest, message: msgBadRequest}
	}
	return backendFailure(err)
}

// enrolAgain maps a refused enrolment code or current password to the enrolment page's message:
// the same key is shown again to fix the field. Anything else is not for that page.
func enrolAgain(err error) (failure, bool) {
	st := status.Convert(err)
	if err == nil || st.Code() != codes.InvalidArgument {
		return failure{}, false
	}
	switch grpcx.FieldOf(st) {
	case "code":
		return failure{status: http.StatusBadRequest, message: msgCodeWrong}, true
	case "current_password":
		return failure{status: http.StatusBadRequest, message: msgWrongCurrent}, true
	}
	return failure{}, false
}
