package login

import (
	"errors"
	"net/url"
	"strings"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/text"
)

// The forms of the link confirmation page, by their method field: each proves the account is the
// person's one way, and "send" mails the code the "email" form takes.
const (
	linkByPassword = "password"
	linkByCode     = "code"
	linkByEmail    = "email"
	linkByPasskey  = "passkey"
	linkSendCode   = "send"
)

// linkForm is a POST to ProviderLinkPath: the sealed pending link, which of the page's forms was
// posted, and that form's proof. Only the proof of the posted method is sent to identity.
type linkForm struct {
	Link, Method string
	// Proof is the password, the authenticator's or the mailed code, or the passkey's assertion
	// (JSON) with PasskeyState; "" for linkSendCode.
	Proof, PasskeyState string
	// Language is the language the page was asked in, carried on by the forms.
	Language string
}

var (
	errMissingLink = errors.New("the link confirmation form has no link")
	errLinkMethod  = errors.New("the link confirmation form names no known method")
)

// linkFormFrom reads and checks a POST to ProviderLinkPath.
func linkFormFrom(v url.Values) (linkForm, error) {
	f := linkForm{Link: v.Get("link"), Method: v.Get("method"), Language: locale.Requested(v)}
	var bound int
	switch f.Method {
	case linkByPassword:
		f.Proof, bound = v.Get("password"), maxSealed
	case linkByCode:
		f.Proof, bound = strings.TrimSpace(v.Get("code")), maxToken
	case linkByEmail:
		f.Proof, bound = strings.TrimSpace(v.Get("email_code")), maxToken
	case linkByPasskey:
		f.Proof, f.PasskeyState, bound = v.Get("passkey"), v.Get("passkey_state"), maxPasskey
	case linkSendCode:
	default:
		return linkForm{}, errLinkMethod
	}
	if len(f.Link) > maxSealed || len(f.Proof) > bound || len(f.PasskeyState) > maxPasskey {
		return linkForm{}, errLongParam
	}
	for _, s := range []string{f.Link, f.Proof, f.PasskeyState} {
		if !text.Valid(s) {
			return linkForm{}, errBadParam
		}
	}
	if f.Link == "" {
		return linkForm{}, errMissingLink
	}
	return f, nil
}
