package accountmail

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/mail"
)

// Verify is what a verification mail says.
type Verify struct {
	To   string // the address to verify
	App  string // the app's display name (or its name)
	Link string // the hosted confirmation page with the link's secret
	Code string // the six-digit code for the page the user signed up on
}

// Registered is what the notice to an already registered address says.
type Registered struct {
	To         string
	App        string
	SignInLink string // the hosted sign-in page of the app
}

// FactorsRemoved is what the notice of removed second factors says.
type FactorsRemoved struct {
	To  string
	App string
}

// LinkCode is what the mail with the code that confirms a provider link says.
type LinkCode struct {
	To       string
	App      string
	Provider string // the provider's display name
	Code     string
	Minutes  int // how long the code works
}

// MemberInvitation is what the invitation to a project's console says.
type MemberInvitation struct {
	To      string // the member's address
	Project string // the project's name
	Link    string // the console's invitation page with the token
}

// EndpointDisabled is what the notice of a disabled webhook endpoint says to a project member.
type EndpointDisabled struct {
	To           string // the member's address
	App          string // the app's name
	URL          string // the endpoint's URL
	FailingSince string // when its deliveries began to fail, as shown (UTC)
	Link         string // the console's events page of the app
}

// mailTemplate is one mail's subject, text part and HTML part. Every sentence is a message of
// pkg/locale; the templates only arrange them.
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

var (
	verifyMail = newTemplate("verify",
		`{{.T "verify.mail.subject" .App}}`,
		`{{.T "verify.mail.greeting"}}

{{.T "verify.mail.intro" .App}}

{{.T "verify.mail.openLink"}}
{{.Link}}

{{.T "verify.mail.enterCode"}}
{{.Code}}

{{.T "verify.mail.validity" .App}}
`,
		`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
<p>{{.T "verify.mail.greeting"}}</p>
<p>{{.T "verify.mail.intro" .App}}</p>
<p><a href="{{.Link}}">{{.T "verify.mail.linkText"}}</a></p>
<p>{{.T "verify.mail.enterCode"}}</p>
<p style="font-size:1.5em;letter-spacing:0.2em"><strong>{{.Code}}</strong></p>
<p>{{.T "verify.mail.validity" .App}}</p>
</body></html>
`)
	registeredMail = newTemplate("registered",
		`{{.T "registered.mail.subject" .App}}`,
		`{{.T "verify.mail.greeting"}}

{{.T "registered.mail.intro" .App}}

{{.T "registered.mail.signIn"}}
{{.SignInLink}}

{{.T "registered.mail.forgot"}}
`,
		`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
<p>{{.T "verify.mail.greeting"}}</p>
<p>{{.T "registered.mail.intro" .App}}</p>
<p>{{.T "registered.mail.signIn"}} <a href="{{.SignInLink}}">{{.T "registered.mail.link"}}</a></p>
<p>{{.T "registered.mail.forgot"}}</p>
</body></html>
`)
	factorsRemovedMail = newTemplate("factors-removed",
		`{{.T "mfa.removedMail.subject" .App}}`,
		`{{.T "verify.mail.greeting"}}

{{.T "mfa.removedMail.intro" .App}}

{{.T "mfa.removedMail.next"}}

{{.T "mfa.removedMail.notYou"}}
`,
		`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
<p>{{.T "verify.mail.greeting"}}</p>
<p>{{.T "mfa.removedMail.intro" .App}}</p>
<p>{{.T "mfa.removedMail.next"}}</p>
<p>{{.T "mfa.removedMail.notYou"}}</p>
</body></html>
`)
)

// linkCodeMail names the provider, so that someone who did not start the link learns which
// provider account tried to reach theirs.
var linkCodeMail = newTemplate("link-code",
	`{{.T "login.idp.linkMail.subject" .App}}`,
	`{{.T "verify.mail.greeting"}}

{{.T "login.idp.linkMail.intro" .Provider .App}}

{{.Code}}

{{.T "login.idp.linkMail.validity" .Minutes}}

{{.T "login.idp.linkMail.notYou"}}
`,
	`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
<p>{{.T "verify.mail.greeting"}}</p>
<p>{{.T "login.idp.linkMail.intro" .Provider .App}}</p>
<p style="font-size:1.5em;letter-spacing:0.2em"><strong>{{.Code}}</strong></p>
<p>{{.T "login.idp.linkMail.validity" .Minutes}}</p>
<p>{{.T "login.idp.linkMail.notYou"}}</p>
</body></html>
`)

// ComposeLinkCode renders the mail with the code that confirms a provider link, in lang.
func ComposeLinkCode(lang string, d LinkCode) (mail.Message, error) {
	return linkCodeMail.compose(d.To, struct {
		LinkCode
		locale.Printer
	}{d, locale.For(lang)})
}

// memberInvitationMail never names who invited: the project's name is the operator's own text,
// and the mail says nothing a stranger could pass off as a personal message.
var memberInvitationMail = newTemplate("member-invitation",
	`{{.T "member.invite.subject" .Project}}`,
	`{{.T "verify.mail.greeting"}}

{{.T "member.invite.intro" .Project}}

{{.T "member.invite.openLink"}}
{{.Link}}

{{.T "member.invite.validity"}}
`,
	`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
<p>{{.T "verify.mail.greeting"}}</p>
<p>{{.T "member.invite.intro" .Project}}</p>
<p><a href="{{.Link}}">{{.T "member.invite.linkText"}}</a></p>
<p>{{.T "member.invite.validity"}}</p>
</body></html>
`)

// ComposeMemberInvitation renders the invitation of a project member to the console in lang.
func ComposeMemberInvitation(lang string, d MemberInvitation) (mail.Message, error) {
	return memberInvitationMail.compose(d.To, struct {
		MemberInvitation
		locale.Printer
	}{d, locale.For(lang)})
}

// endpointDisabledMail tells a member that Berth stopped sending an app's webhooks to an endpoint
// and where to turn it on again; the URL is the member's own configuration, shown so they know
// which receiver to fix.
var endpointDisabledMail = newTemplate("endpoint-disabled",
	`{{.T "endpointDisabled.mail.subject" .App}}`,
	`{{.T "verify.mail.greeting"}}

{{.T "endpointDisabled.mail.intro" .App .FailingSince}}

{{.URL}}

{{.T "endpointDisabled.mail.next"}}
{{.Link}}
`,
	`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
<p>{{.T "verify.mail.greeting"}}</p>
<p>{{.T "endpointDisabled.mail.intro" .App .FailingSince}}</p>
<p><code>{{.URL}}</code></p>
<p>{{.T "endpointDisabled.mail.next"}} <a href="{{.Link}}">{{.T "endpointDisabled.mail.linkText"}}</a></p>
</body></html>
`)

// ComposeEndpointDisabled renders the notice of a disabled webhook endpoint in lang.
func ComposeEndpointDisabled(lang string, d EndpointDisabled) (mail.Message, error) {
	return endpointDisabledMail.compose(d.To, struct {
		EndpointDisabled
		locale.Printer
	}{d, locale.For(lang)})
}

// ComposeFactorsRemoved renders the notice that the user's second factors were removed, in lang.
func ComposeFactorsRemoved(lang string, d FactorsRemoved) (mail.Message, error) {
	return factorsRemovedMail.compose(d.To, struct {
		FactorsRemoved
		locale.Printer
	}{d, locale.For(lang)})
}

// ComposeVerify renders the verification mail in lang (en or de; anything else is English).
func ComposeVerify(lang string, d Verify) (mail.Message, error) {
	return verifyMail.compose(d.To, struct {
		Verify
		locale.Printer
	}{d, locale.For(lang)})
}

// ComposeRegistered renders the notice to a registered address in lang.
func ComposeRegistered(lang string, d Registered) (mail.Message, error) {
	return registeredMail.compose(d.To, struct {
		Registered
		locale.Printer
	}{d, locale.For(lang)})
}

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
