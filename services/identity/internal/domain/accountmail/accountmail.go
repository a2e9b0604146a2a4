package accountmail

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"

	"github.com/berthhq/berth/pkg/mail"
)

// Verify is what a verification mail says.
type Verify struct {
	To   string // the address to verify
	App  string // the app's name
	Link string // the hosted confirmation page with the link's secret
	Code string // the six-digit code for the page the user signed up on
}

// Registered is what the notice to an already registered address says.
type Registered struct {
	To         string
	App        string
	SignInLink string // the hosted sign-in page of the app
}

// mailTemplate is one mail's subject, text part and HTML part.
type mailTemplate struct {
	subject *texttemplate.Template
	text    *texttemplate.Template
	html    *htmltemplate.Template
}

func newTemplate(name, subject, text, html string) mailTemplate {
	return mailTemplate{
		subject: texttemplate.Must(texttemplate.New(name + "-subject").Parse(subject)),
		text:    texttemplate.Must(texttemplate.New(name + "-text").Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New(name + "-html").Parse(html)),
	}
}

// The mails' English texts, one template per mail, kept apart from the code so that they can move
// into a message catalog whole.
var (
	verifyMail = newTemplate("verify",
		`Confirm your email address for {{.App}}`,
		`Hello,

please confirm that this is your email address for {{.App}}.

Open this link to confirm it:
{{.Link}}

Or enter this code on the page where you signed up:
{{.Code}}

The link and the code work once and for 24 hours. If you did not sign up for {{.App}}, you can
ignore this email: no account is used until the address is confirmed.
`,
		`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>please confirm that this is your email address for <strong>{{.App}}</strong>.</p>
<p><a href="{{.Link}}">Confirm your email address</a></p>
<p>Or enter this code on the page where you signed up:</p>
<p style="font-size:1.5em;letter-spacing:0.2em"><strong>{{.Code}}</strong></p>
<p>The link and the code work once and for 24 hours. If you did not sign up for {{.App}}, you can ignore this email: no account is used until the address is confirmed.</p>
</body></html>
`)
	registeredMail = newTemplate("registered",
		`Sign-up attempt with your address at {{.App}}`,
		`Hello,

someone tried to create an account for {{.App}} with this email address. This address already has
an account, so nothing was changed.

If it was you, sign in instead:
{{.SignInLink}}

If you forgot your password, choose "Forgot your password?" on the sign-in page. If it was not
you, you can ignore this email.
`,
		`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>someone tried to create an account for <strong>{{.App}}</strong> with this email address. This address already has an account, so nothing was changed.</p>
<p>If it was you, <a href="{{.SignInLink}}">sign in instead</a>.</p>
<p>If you forgot your password, choose “Forgot your password?” on the sign-in page. If it was not you, you can ignore this email.</p>
</body></html>
`)
)

// ComposeVerify renders the verification mail.
func ComposeVerify(d Verify) (mail.Message, error) { return verifyMail.compose(d.To, d) }

// ComposeRegistered renders the notice to a registered address.
func ComposeRegistered(d Registered) (mail.Message, error) { return registeredMail.compose(d.To, d) }

func (t mailTemplate) compose(to string, data any) (mail.Message, error) {
	var subject, text, html bytes.Buffer
	if err := t.subject.Execute(&subject, data); err != nil {
		return mail.Message{}, fmt.Errorf("accountmail: subject: %w", err)
	}
	if err := t.text.Execute(&text, data); err != nil {
		return mail.Message{}, fmt.Errorf("accountmail: text: %w", err)
	}
	if err := t.html.Execute(&html, data); err != nil {
		return mail.Message{}, fmt.Errorf("accountmail: html: %w", err)
	}
	return mail.Message{To: to, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
