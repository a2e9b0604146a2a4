package emailchange

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"

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
	App  string // the app's name
	Link string // Confirm: the confirmation page with the link's secret
}

// template is one mail in one language.
type template struct {
	subject *texttemplate.Template
	text    *texttemplate.Template
	html    *htmltemplate.Template
}

func newTemplate(name, subject, text, html string) template {
	return template{
		subject: texttemplate.Must(texttemplate.New(name + "-subject").Parse(subject)),
		text:    texttemplate.Must(texttemplate.New(name + "-text").Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New(name + "-html").Parse(html)),
	}
}

// Compose renders the mail of kind in lang (en or de; any other language gets English, so a
// user whose language Berth has no mails for still hears of a change to their account).
func Compose(kind Kind, lang string, d Data) (mail.Message, error) {
	byLang, ok := templates[kind]
	if !ok {
		return mail.Message{}, fmt.Errorf("emailchange: no mail %q", kind)
	}
	t, ok := byLang[lang]
	if !ok {
		t = byLang["en"]
	}
	var subject, text, html bytes.Buffer
	if err := t.subject.Execute(&subject, d); err != nil {
		return mail.Message{}, fmt.Errorf("emailchange: %s subject: %w", kind, err)
	}
	if err := t.text.Execute(&text, d); err != nil {
		return mail.Message{}, fmt.Errorf("emailchange: %s text: %w", kind, err)
	}
	if err := t.html.Execute(&html, d); err != nil {
		return mail.Message{}, fmt.Errorf("emailchange: %s html: %w", kind, err)
	}
	return mail.Message{To: d.To, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
