package console

import (
	"net/url"

	"github.com/berthhq/berth/pkg/keyset"
)

// searchForm is the users page's search: an email prefix or a user id (empty lists every user),
// and the cursor of the page to show ("" for the first). Identity decides what the query means
// and whether the cursor is one of its own; here both are only bounded.
type searchForm struct{ Query, After string }

func searchFrom(v url.Values) (searchForm, error) {
	q, err := textField(v, "q", keyset.MaxQuery, false)
	if err != nil {
		return searchForm{}, err
	}
	after, err := textField(v, "after", maxToken, false)
	if err != nil {
		return searchForm{}, err
	}
	return searchForm{Query: q, After: after}, nil
}

// The user page's actions. Each is also the notice the page shows after it (view.go's notices).
const (
	userFreeze             = "freeze"
	userUnfreeze           = "unfreeze"
	userRevokeSessions     = "revokeSessions"
	userSendReset          = "sendReset"
	userResendVerification = "resendVerification"
	userResetFactors       = "resetFactors"
	userDelete             = "delete"
)

// userForm is a posted action of the user page. Freezing, ending the sessions and removing the
// second factors need the "I understand" box; deleting needs the user's address typed out
// (ConfirmEmail), which the handler compares with the user's own.
type userForm struct {
	Action       string
	ConfirmEmail string // delete
}

func userActionFrom(v url.Values) (userForm, error) {
	a, err := oneOf(v, "action", userFreeze, userUnfreeze, userRevokeSessions, userSendReset, userResendVerification,
		userResetFactors, userDelete)
	if err != nil {
		return userForm{}, err
	}
	f := userForm{Action: a}
	switch a {
	case userFreeze, userRevokeSessions, userResetFactors:
		err = confirmed(v)
	case userDelete:
		f.ConfirmEmail, err = textField(v, "confirm_email", maxEmail, true)
	}
	if err != nil {
		return userForm{}, err
	}
	return f, nil
}
