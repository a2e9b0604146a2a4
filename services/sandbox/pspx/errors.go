package pspx

import (
	"fmt"
	"net/http"
)

// apiError is the provider's error object, the value of the "error" key of an error answer.
type apiError struct {
	status      int
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	DeclineCode string `json:"decline_code,omitempty"`
	Message     string `json:"message"`
	Param       string `json:"param,omitempty"`
}

// envelope is the body of an error answer.
type envelope struct {
	Error *apiError `json:"error"`
}

func invalidRequest(status int, code, param, format string, args ...any) *apiError {
	return &apiError{status: status, Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

func errMissing(param string) *apiError {
	return invalidRequest(http.StatusBadRequest, "parameter_missing", param, "Missing required param: %s.", param)
}

func errUnknownParam(param string) *apiError {
	return invalidRequest(http.StatusBadRequest, "parameter_unknown", param, "Received unknown parameter: %s", param)
}

// errInvalid blames a parameter's value; the provider sends no code for most of these.
func errInvalid(param, format string, args ...any) *apiError {
	return invalidRequest(http.StatusBadRequest, "", param, format, args...)
}

// errState refuses an action the object's current state does not allow.
func errState(format string, args ...any) *apiError {
	return invalidRequest(http.StatusBadRequest, "", "", format, args...)
}

func errNoSuch(kind, id, param string) *apiError {
	return invalidRequest(http.StatusNotFound, "resource_missing", param, "No such %s: '%s'", kind, id)
}

func errDeclined() *apiError {
	return &apiError{status: http.StatusPaymentRequired, Type: "card_error", Code: "card_declined", DeclineCode: "generic_decline", Message: "Your card was declined."}
}

func errAuth(format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnauthorized, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}
