package emailchange

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/mail"
)

// Kind is which of the mails to render.
type Kind string

// The mails.
const (
	// Confirm goes to the new address with the link that makes the change.
	Confirm Kind = "confirm"
	// Taken goes to a new address that already belongs to another user of the app, instead of a
	// link: the person asking learns nothing, the owner learns someone tried.
	Taken Kind = "taken"
	// Changed goes to the old address once the new one confirmed.
	Changed Kind = "changed"
)

// Data is what the mails say.
type Data struct {
	To   string // the recipient
	App  string // the app's display name (or its name)
	Link string // Confirm: the confirmation page with the link's secret
	// Accent (#rrggbb) and Logo (an https URL) are the app's branding, both validated when the
	// operator set them; "" leaves the mail in the neutral look.
	Accent string
	Logo   string
}

// view is what the templates see: the mail's kind, its data and the printer of its language.
type view struct {
	Kind Kind
	Data
	locale.Printer
}

// Every sentence is a message of pkg/locale; each kind has its subject, body and closing line.
var (
	subjectTemplate = texttemplate.Must(texttemplate.New("subject").Parse(
		`{{if eq .Kind "confirm"}}{{.T "emailChangeMail.confirm.subject" .App}}{{else if eq .Kind "taken"}}{{.T "emailChangeMail.taken.subject" .App}}{{else}}{{.T "emailChangeMail.changed.subject" .App}}{{end}}`))
	textTemplate = texttemplate.Must(texttemplate.New("text").Parse(`{{.T "emailChangeMail.greeting"}}

{{if eq .Kind "confirm"}}{{.T "emailChangeMail.confirm.body" .App}}
{{.Link}}

{{.T "emailChangeMail.confirm.next"}}
{{else if eq .Kind "taken"}}{{.T "emailChangeMail.taken.body" .App}}

{{.T "emailChangeMail.taken.next"}}
{{else}}{{.T "emailChangeMail.changed.body" .App}}

{{.T "emailChangeMail.changed.next" .App}}
{{end}}`))
	htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
{{if .Logo}}<p><img src="{{.Logo}}" alt="{{.App}}" height="40"></p>
{{end}}<p>{{.T "emailChangeMail.greeting"}}</p>
{{if eq .Kind "confirm"}}<p>{{.T "emailChangeMail.confirm.body" .App}}</p>
<p><a href="{{.Link}}"{{if .Accent}} style="color:{{.Accent}}"{{end}}>{{.T "emailChangeMail.confirm.link"}}</a></p>
<p>{{.T "emailChangeMail.confirm.next"}}</p>
{{else if eq .Kind "taken"}}<p>{{.T "emailChangeMail.taken.body" .App}}</p>
<p>{{.T "emailChangeMail.taken.next"}}</p>
{{else}}<p>{{.T "emailChangeMail.changed.body" .App}}</p>
<p>{{.T "emailChangeMail.changed.next" .App}}</p>
{{end}}</body></html>
`))
)

// Compose renders the mail of kind in lang, a language Berth speaks (en or de; locale.Choose
// picks it).
func Compose(kind Kind, lang string, d Data) (mail.Message, error) {
	switch {
	case kind != Confirm && kind != Taken && kind != Changed:
		return mail.Message{}, fmt.Errorf("emailchange: no mail %q", kind)
	case lang != locale.English && lang != locale.German:
		return mail.Message{}, fmt.Errorf("emailchange: no messages in language %q", lang)
	}
	v := view{Kind: kind, Data: d, Printer: locale.For(lang)}
	var subject, text, html bytes.Buffer
	if err := subjectTemplate.Execute(&subject, v); err != nil {
		return mail.Message{}, fmt.Errorf("emailchange: %s subject: %w", kind, err)
	}
	if err := textTemplate.Execute(&text, v); err != nil {
		return mail.Message{}, fmt.Errorf("emailchange: %s text: %w", kind, err)
	}
	if err := htmlTemplate.Execute(&html, v); err != nil {
		return mail.Message{}, fmt.Errorf("emailchange: %s html: %w", kind, err)
	}
	return mail.Message{To: d.To, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
