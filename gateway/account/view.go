package account

import (
	"net/url"
	"time"

	"github.com/berthhq/berth/gateway/webpage"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// view is what the page template shows. Every value is escaped by html/template.
type view struct {
	app
	User     *identityv1.User
	Sessions []*identityv1.Session
	MFA      *identityv1.SecondFactors
	Methods  *identityv1.SignInMethods
	Notice   string // a catalog key
	Message  string // a catalog key
	CSRF     string
}

// Head is the layout's view of the page.
func (v view) Head() webpage.Head {
	return webpage.Head{Title: v.T("account.title"), Brand: v.Brand, Printer: v.Printer}
}

func (v view) Action() string { return Path }

// LinkURL is the page's link that starts linking the provider of slot.
func (v view) LinkURL(slot string) string {
	return v.pageURL("") + "&" + url.Values{"link": {slot}}.Encode()
}

// When shows an RFC 3339 time of a session in UTC, minutes precision; "" stays "".
func (v view) When(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// againView is the card of a sign-in that did not complete or a sign-out: in the app's language
// and look, with a link that starts the page again.
type againView struct {
	app
	Title, Message, RequestID string
}

func (v againView) Head() webpage.Head {
	return webpage.Head{Title: v.T(v.Title), Brand: v.Brand, Printer: v.Printer}
}

func (v againView) Again() string { return v.pageURL("") }

// enrolView is the TOTP enrolment: the key to add to the authenticator and the form for its first
// code.
type enrolView struct {
	app
	Key     webpage.TOTPKey
	Message string // a catalog key
	CSRF    string
}

func (v enrolView) Head() webpage.Head {
	return webpage.Head{Title: v.T("account.mfa.enrolTitle"), Brand: v.Brand, Printer: v.Printer}
}

func (v enrolView) Action() string { return Path }

func (v enrolView) Back() string { return v.pageURL("") }

// codesView shows new recovery codes, once.
type codesView struct {
	app
	Codes webpage.RecoveryCodes
}

func (v codesView) Head() webpage.Head {
	return webpage.Head{Title: v.T("mfa.recovery.title"), Brand: v.Brand, Printer: v.Printer}
}

func (v codesView) Back() string { return v.pageURL("") }

// passkeyView is the page that creates a passkey in the browser.
type passkeyView struct {
	app
	Passkey webpage.Passkey
	CSRF    string
}

func (v passkeyView) Head() webpage.Head {
	return webpage.Head{Title: v.T("account.mfa.passkeyTitle"), Brand: v.Brand, Printer: v.Printer}
}

func (v passkeyView) Action() string { return Path }

func (v passkeyView) Back() string { return v.pageURL("") }
