package account

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/text"
)

// maxParam bounds every parameter but the passwords: ids, codes and tokens are far below it.
const maxParam = 4096

// maxPasskey bounds a created passkey's JSON and its state (a few kilobytes each).
const maxPasskey = 32 << 10

// maxCode bounds a typed one-time code: six digits, with spaces to spare.
const maxCode = 32

// maxPassword bounds a password field in bytes: identity allows 128 characters of at most 4 bytes.
const maxPassword = 4 * 128

// The page's actions, the posted action field.
const (
	actionPassword = "password"
	actionEnd      = "end"
	actionEndAll   = "endAll"
	actionSignOut  = "signOut"
	actionResend   = "resend"
	// The second factor: start a TOTP enrolment, confirm it with the first code, replace the
	// recovery codes.
	actionTOTPStart   = "totpStart"
	actionTOTPConfirm = "totpConfirm"
	actionNewRecovery = "recoveryCodes"
	// A passkey: start its creation (the browser's prompt), then store what the browser made.
	actionPasskeyStart  = "passkeyStart"
	actionPasskeyFinish = "passkeyFinish"
	// Sign-in methods: link a provider (GET ?link=<slot>, through the provider), unlink one,
	// remove one second factor (the authenticator app or a passkey).
	actionLink         = "link"
	actionUnlink       = "unlink"
	actionRemoveFactor = "removeFactor"
)

// slots are the provider slots a link or unlink may name.
var slots = []string{"idpA", "idpB", "idpC", "idpD"}

// The second-factor kinds a removal may name.
const (
	kindTOTP    = "totp"
	kindPasskey = "passkey"
)

// link is what GET /account reads: the app, the language and the notice of a finished action,
// or the provider slot to link (a link, not a form: see Page.startLink).
type link struct {
	ClientID, Language, Notice string
	Link                       string
}

// action is a posted form.
type action struct {
	link
	Action       string
	Current, New string // the password change (Current also confirms a new second factor)
	SessionID    string // ending one session
	Code         string // confirming a TOTP enrolment
	// Passkey and PasskeyState are a created passkey (JSON) and its ceremony's sealed state.
	Passkey, PasskeyState string
	Slot                  string // unlinking a provider
	// Kind and FactorID name the second factor to remove (FactorID only for a passkey).
	Kind, FactorID string
}

var (
	errMissingClient = errors.New("the link lacks client_id")
	errBadParam      = errors.New("a parameter is too long or breaks the text rule")
	errBadAction     = errors.New("the form names no known action")
	errBadSession    = errors.New("the session id is not a UUID")
	errBadPassword   = errors.New("a password field is too long or holds control characters")
	errBadCode       = errors.New("the code is too long or holds control characters")
	errBadPasskey    = errors.New("the passkey fields are missing, too long or hold control characters")
	errBadSlot       = errors.New("the slot is not idpA, idpB, idpC or idpD")
	errBadFactor     = errors.New("the factor is not the authenticator app or a passkey's UUID")
)

// validParam reports whether s may be sent on: valid UTF-8, no control characters, not too long.
func validParam(s string) bool { return len(s) <= maxParam && text.Valid(s) }

// linkFrom reads the page's link (or the same fields of a form).
func linkFrom(v url.Values) (link, error) {
	l := link{ClientID: v.Get("client_id"), Language: locale.Requested(v), Notice: v.Get("notice"), Link: v.Get("link")}
	for _, s := range []string{l.ClientID, l.Notice} {
		if !validParam(s) {
			return link{}, errBadParam
		}
	}
	if l.Link != "" && !slices.Contains(slots, l.Link) {
		return link{}, errBadSlot
	}
	if l.ClientID == "" {
		return link{}, errMissingClient
	}
	return l, nil
}

// actionFrom reads a posted form: the link's fields, the action and the action's own fields.
func actionFrom(v url.Values) (action, error) {
	l, err := linkFrom(v)
	if err != nil {
		return action{}, err
	}
	a := action{link: l, Action: v.Get("action")}
	switch a.Action {
	case actionPassword:
		a.New = v.Get("new_password")
		if len(a.New) > maxPassword || !text.Valid(a.New) {
			return action{}, errBadPassword
		}
		if a.Current, err = currentPassword(v); err != nil {
			return action{}, err
		}
	case actionEnd:
		id, err := uuid.Parse(v.Get("session_id"))
		if err != nil || len(v.Get("session_id")) != 36 {
			return action{}, errBadSession
		}
		a.SessionID = id.String()
	case actionTOTPConfirm:
		a.Code = strings.TrimSpace(v.Get("code"))
		if len(a.Code) > maxCode || !text.Valid(a.Code) {
			return action{}, errBadCode
		}
		if a.Current, err = currentPassword(v); err != nil {
			return action{}, err
		}
	case actionPasskeyFinish:
		a.Passkey, a.PasskeyState = v.Get("passkey"), v.Get("passkey_state")
		for _, s := range []string{a.Passkey, a.PasskeyState} {
			if s == "" || len(s) > maxPasskey || !text.Valid(s) {
				return action{}, errBadPasskey
			}
		}
		if a.Current, err = currentPassword(v); err != nil {
			return action{}, err
		}
	case actionUnlink:
		a.Slot = v.Get("slot")
		if !slices.Contains(slots, a.Slot) {
			return action{}, errBadSlot
		}
		// Asked only of a user who has a password: the field may be absent.
		if a.Current, err = currentPassword(v); err != nil {
			return action{}, err
		}
	case actionRemoveFactor:
		a.Kind = v.Get("kind")
		switch a.Kind {
		case kindTOTP:
		case kindPasskey:
			id, err := uuid.Parse(v.Get("factor_id"))
			if err != nil || len(v.Get("factor_id")) != 36 {
				return action{}, errBadFactor
			}
			a.FactorID = id.String()
		default:
			return action{}, errBadFactor
		}
		if a.Current, err = currentPassword(v); err != nil {
			return action{}, err
		}
	case actionEndAll, actionSignOut, actionResend, actionTOTPStart, actionNewRecovery, actionPasskeyStart:
	default:
		return action{}, errBadAction
	}
	return a, nil
}

// currentPassword reads the form's current password, asked again before the password or a
// second factor changes.
func currentPassword(v url.Values) (string, error) {
	pw := v.Get("current_password")
	if len(pw) > maxPassword || !text.Valid(pw) {
		return "", errBadPassword
	}
	return pw, nil
}
