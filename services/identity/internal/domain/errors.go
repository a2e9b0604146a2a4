package domain

import (
	"errors"
	"fmt"
)

// ErrNotFound is matched (errors.Is) by every "does not exist or is not yours" error. Callers answer
// both cases alike so that ids of other apps cannot be probed.
var ErrNotFound = errors.New("not found")

// ErrEmailTaken is returned by user stores when an email is already used by another user of the app.
var ErrEmailTaken = errors.New("email already in use")

// ErrRoleTaken is returned by role stores when the app already has a role of that name
// (case-insensitively): two roles that read alike could not be told apart by the apps' users.
var ErrRoleTaken = errors.New("role name already in use")

// NotFound names the missing thing, e.g. NotFound("user") reads "user not found".
func NotFound(what string) error {
	return fmt.Errorf("%s %w", what, ErrNotFound)
}

// ValidationError reports one invalid input field. Field is the contract's JSON name of the field
// ("email", "birthdate"); the transport adds any path prefix it needs.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Reason }

// Invalid builds a ValidationError.
func Invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
