package console

import (
	"errors"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/text"
)

// Field limits. Identity checks every value again; these keep what the console sends bounded and
// within the text rule (pkg/text), so a broken or forged form is refused here with the field named.
const (
	maxEmail    = 254
	maxName     = 128 // characters
	maxPassword = 4 * 128
	maxCode     = 32
	maxToken    = 4096
	maxDescr    = 512 // characters
	maxOrigin   = 2048
	// maxPasskey bounds a passkey's JSON and its ceremony's sealed state (identity's bound too).
	maxPasskey     = 64 << 10
	maxPasskeyName = 64 // characters
)

// errField is a refused form field; the page names it.
type errField struct{ field string }

func (e errField) Error() string {
	return "the form's " + e.field + " is missing, too long or not valid"
}

// refused reports the field a parser refused, "" for none.
func refused(err error) string {
	var f errField
	if errors.As(err, &f) {
		return f.field
	}
	return ""
}

// textField reads v[key] trimmed, within limit characters and the text rule; required refuses "".
func textField(v url.Values, key string, limit int, required bool) (string, error) {
	s := strings.TrimSpace(v.Get(key))
	if !text.Valid(s) || utf8.RuneCountInString(s) > limit || (required && s == "") {
		return "", errField{key}
	}
	return s, nil
}

// password reads a password field as typed (spaces count), within maxPassword bytes.
func password(v url.Values, key string) (string, error) {
	s := v.Get(key)
	if s == "" || len(s) > maxPassword || !text.Valid(s) {
		return "", errField{key}
	}
	return s, nil
}

// email reads an address: one plain addr-spec, as identity stores them.
func email(v url.Values, key string) (string, error) {
	s, err := textField(v, key, maxEmail, true)
	if err != nil {
		return "", err
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return "", errField{key}
	}
	return s, nil
}

// id reads a UUID in its canonical form.
func id(v url.Values, key string) (string, error) {
	s := v.Get(key)
	u, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return "", errField{key}
	}
	return u.String(), nil
}

// oneOf reads a value that must be one of allowed.
func oneOf(v url.Values, key string, allowed ...string) (string, error) {
	s := v.Get(key)
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", errField{key}
}

// confirmed reads the checkbox a destructive action must carry.
func confirmed(v url.Values) error {
	if v.Get("confirm") != "yes" {
		return errField{"confirm"}
	}
	return nil
}

// signInForm is the sign-in page's form.
type signInForm struct{ Email, Password string }

func signInFrom(v url.Values) (signInForm, error) {
	e, err := email(v, "email")
	if err != nil {
		return signInForm{}, err
	}
	p, err := password(v, "password")
	if err != nil {
		return signInForm{}, err
	}
	return signInForm{Email: e, Password: p}, nil
}

// secondFactorForm finishes a sign-in waiting for its second factor.
type secondFactorForm struct{ Challenge, Code string }

func secondFactorFrom(v url.Values) (secondFactorForm, error) {
	c, err := textField(v, "challenge", maxToken, true)
	if err != nil {
		return secondFactorForm{}, err
	}
	code, err := textField(v, "code", maxCode, true)
	if err != nil {
		return secondFactorForm{}, err
	}
	return secondFactorForm{Challenge: c, Code: code}, nil
}

// passkeyAnswer reads what the passkey script posts: the browser's credential (field passkey)
// and the ceremony's sealed state (passkey_state), both required and bounded.
func passkeyAnswer(v url.Values) (credential, state string, err error) {
	if credential, err = textField(v, "passkey", maxPasskey, true); err != nil {
		return "", "", err
	}
	if state, err = textField(v, "passkey_state", maxPasskey, true); err != nil {
		return "", "", err
	}
	return credential, state, nil
}

type passkeySignInForm struct{ Challenge, Passkey, State string }

// passkeySignInFrom reads the second step's passkey form.
func passkeySignInFrom(v url.Values) (passkeySignInForm, error) {
	c, err := textField(v, "challenge", maxToken, true)
	if err != nil {
		return passkeySignInForm{}, err
	}
	pk, st, err := passkeyAnswer(v)
	if err != nil {
		return passkeySignInForm{}, err
	}
	return passkeySignInForm{Challenge: c, Passkey: pk, State: st}, nil
}

// invitationToken reads the invitation link's (or form's) token.
func invitationToken(v url.Values) (string, error) {
	return textField(v, "token", maxToken, true)
}

// acceptForm accepts an invitation: a name and a new password, or the existing account's
// password (Name empty).
type acceptForm struct{ Token, Name, Password string }

func acceptFrom(v url.Values) (acceptForm, error) {
	t, err := invitationToken(v)
	if err != nil {
		return acceptForm{}, err
	}
	n, err := textField(v, "name", maxName, false)
	if err != nil {
		return acceptForm{}, err
	}
	p, err := password(v, "password")
	if err != nil {
		return acceptForm{}, err
	}
	return acceptForm{Token: t, Name: n, Password: p}, nil
}

// switchFrom reads the project switcher's choice.
func switchFrom(v url.Values) (string, error) { return id(v, "project") }

// inviteForm invites a member to the project.
type inviteForm struct{ Email, Name, Language string }

func inviteFrom(v url.Values) (inviteForm, error) {
	e, err := email(v, "email")
	if err != nil {
		return inviteForm{}, err
	}
	n, err := textField(v, "name", maxName, false)
	if err != nil {
		return inviteForm{}, err
	}
	l, err := oneOf(v, "language", "en", "de")
	if err != nil {
		return inviteForm{}, err
	}
	return inviteForm{Email: e, Name: n, Language: l}, nil
}

// totpForm confirms a TOTP enrolment with its first code and the member's password.
type totpForm struct{ Code, Password string }

func totpFrom(v url.Values) (totpForm, error) {
	c, err := textField(v, "code", maxCode, true)
	if err != nil {
		return totpForm{}, err
	}
	p, err := password(v, "current_password")
	if err != nil {
		return totpForm{}, err
	}
	return totpForm{Code: c, Password: p}, nil
}

// The security page's factor actions.
const (
	securityAddPasskey    = "addPasskey"
	securityRemovePasskey = "removePasskey"
	securityRemoveTotp    = "removeTotp"
)

// passkeyForm is the security page's passkey form: a new passkey (name, the browser's credential
// and its ceremony's state) or the id of one to remove; both carry the current password.
type passkeyForm struct {
	Name, Passkey, State string // addPasskey
	ID                   string // removePasskey
	Password             string
}

func passkeyFrom(action string, v url.Values) (passkeyForm, error) {
	var f passkeyForm
	var err error
	if action == securityAddPasskey {
		if f.Name, err = textField(v, "name", maxPasskeyName, true); err != nil {
			return passkeyForm{}, err
		}
		if f.Passkey, f.State, err = passkeyAnswer(v); err != nil {
			return passkeyForm{}, err
		}
	} else if f.ID, err = id(v, "passkey_id"); err != nil {
		return passkeyForm{}, err
	}
	if f.Password, err = password(v, "current_password"); err != nil {
		return passkeyForm{}, err
	}
	return f, nil
}

// The API keys page's actions.
const (
	keyCreate = "create"
	keyRename = "rename"
	keyRevoke = "revoke"
)

// keyForm is a posted action of the API keys page.
type keyForm struct {
	Action            string
	KeyID             string // rename, revoke
	Type              string // create: read or write
	Name, Description string // create, rename
}

func keyFrom(v url.Values) (keyForm, error) {
	a, err := oneOf(v, "action", keyCreate, keyRename, keyRevoke)
	if err != nil {
		return keyForm{}, err
	}
	f := keyForm{Action: a}
	if a != keyCreate {
		if f.KeyID, err = id(v, "key"); err != nil {
			return keyForm{}, err
		}
	}
	switch a {
	case keyCreate:
		if f.Type, err = oneOf(v, "type", "read", "write"); err != nil {
			return keyForm{}, err
		}
		fallthrough
	case keyRename:
		if f.Name, err = textField(v, "name", maxName, true); err != nil {
			return keyForm{}, err
		}
		if f.Description, err = textField(v, "description", maxDescr, false); err != nil {
			return keyForm{}, err
		}
	case keyRevoke:
		if err := confirmed(v); err != nil {
			return keyForm{}, err
		}
	}
	return f, nil
}

// The app page's actions.
const (
	appEnable       = "enable"
	appDisable      = "disable"
	appRotate       = "rotate"
	appAddOrigin    = "addOrigin"
	appRemoveOrigin = "removeOrigin"
	appBranding     = "branding"
	appVerification = "verification"
	appMFA          = "mfa"
	appPasskeys     = "passkeys"
	appClearIDP     = "clearProvider"
	appRedirects    = "redirectUris"
	appLifetimes    = "tokenLifetimes"
)

// appForm is a posted action of the app page.
type appForm struct {
	Action string
	Origin string // addOrigin, removeOrigin
	// branding
	DisplayName, Accent, LogoURL, Language string
	Policy                                 string // verification, mfa
	Enabled                                bool   // passkeys
	Slot                                   string // clearProvider
	IDP                                    providerForm
	RedirectURIs                           []string // redirectUris
	AccessTTL, RefreshTTL                  int32    // tokenLifetimes, seconds (0: the default)
}

func appFrom(v url.Values) (appForm, error) {
	a, err := oneOf(v, "action", appEnable, appDisable, appRotate, appAddOrigin, appRemoveOrigin, appBranding,
		appVerification, appMFA, appPasskeys, appClearIDP, appSetIDP, appRedirects, appLifetimes)
	if err != nil {
		return appForm{}, err
	}
	f := appForm{Action: a}
	switch a {
	case appDisable, appRotate, appClearIDP:
		if err := confirmed(v); err != nil {
			return appForm{}, err
		}
		if a == appClearIDP {
			f.Slot, err = oneOf(v, "slot", "idpA", "idpB", "idpC", "idpD")
		}
	case appAddOrigin, appRemoveOrigin:
		f.Origin, err = textField(v, "origin", maxOrigin, true)
	case appBranding:
		if f.DisplayName, err = textField(v, "display_name", 100, false); err != nil {
			return appForm{}, err
		}
		if f.Accent, err = textField(v, "accent", 7, false); err != nil {
			return appForm{}, err
		}
		if f.LogoURL, err = textField(v, "logo_url", maxOrigin, false); err != nil {
			return appForm{}, err
		}
		f.Language, err = oneOf(v, "default_language", "", "en", "de")
	case appVerification:
		f.Policy, err = oneOf(v, "policy", "required", "optional")
	case appMFA:
		f.Policy, err = oneOf(v, "policy", "off", "optional", "required")
	case appSetIDP:
		f.IDP, err = providerFrom(v)
	case appRedirects:
		f.RedirectURIs, err = lines(v, "redirect_uris", maxRedirectURIs)
	case appLifetimes:
		if f.AccessTTL, err = seconds(v, "access_ttl"); err == nil {
			f.RefreshTTL, err = seconds(v, "refresh_ttl")
		}
	case appPasskeys:
		var on string
		on, err = oneOf(v, "enabled", "true", "false")
		f.Enabled = on == "true"
	}
	if err != nil {
		return appForm{}, err
	}
	return f, nil
}

// maxRedirectURIs is identity's bound on an app's redirect URIs.
const maxRedirectURIs = 50

// lines reads a text area of one entry per line (blank lines skipped), at most limit entries of
// maxOrigin characters each.
func lines(v url.Values, key string, limit int) ([]string, error) {
	raw := v.Get(key)
	if len(raw) > limit*(maxOrigin+2) {
		return nil, errField{key}
	}
	out := []string{}
	for _, l := range strings.Split(raw, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !text.Valid(l) || len(l) > maxOrigin {
			return nil, errField{key}
		}
		out = append(out, l)
	}
	if len(out) > limit {
		return nil, errField{key}
	}
	return out, nil
}

// seconds reads a whole number of seconds a proto int32 holds; identity judges its range.
func seconds(v url.Values, key string) (int32, error) {
	s := strings.TrimSpace(v.Get(key))
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, errField{key}
	}
	return int32(n), nil
}
