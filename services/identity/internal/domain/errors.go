package domain

import (
	"unicode"

	"github.com/berthhq/berth/pkg/fault"
)

// ErrNotFound is matched (errors.Is) by every "does not exist or is not yours" error. Callers answer
// both cases alike so that ids of other apps cannot be probed.
var ErrNotFound = fault.NotFound("Not found")

// ErrEmailTaken is returned by user stores when an email is already used by another user of the app.
var ErrEmailTaken = fault.InvalidField("email", "is already used by another user of this app")

// ErrRoleTaken is returned by role stores when the app already has a role of that name
// (case-insensitively): two roles that read alike could not be told apart by the apps' users.
var ErrRoleTaken = fault.InvalidField("name", "is already used by another role of this app")

// NotFound names the missing thing, e.g. NotFound("user") reads "User not found"; it matches
// ErrNotFound.
func NotFound(what string) error {
	return fault.NotFound("%s not found", sentence(what)).Wrap(ErrNotFound)
}

// sentence capitalises the first letter of a message ("user" -> "User").
func sentence(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
