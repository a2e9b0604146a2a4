// Package invite renders the referral invite email (route 23) in the languages Berth supports. The
// HTML part goes through html/template, so names chosen by users and apps are escaped; the text
// part is plain text, where nothing needs escaping.
package invite

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"

	"github.com/berthhq/berth/pkg/mail"
)

// Data is what an invite says.
type Data struct {
	To      string // the invitee's address
	Inviter string // the inviting user's name (or address)
	App     string // the app's name
	Link    string // the hosted sign-up page with the referral code
}

// template is one language's invite.
type template struct {
	subject *texttemplate.Template
	text    *texttemplate.Template
	html    *htmltemplate.Template
}

func newTemplate(lang, subject, text, html string) template {
	return template{
		subject: texttemplate.Must(texttemplate.New(lang + "-subject").Parse(subject)),
		text:    texttemplate.Must(texttemplate.New(lang + "-text").Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New(lang + "-html").Parse(html)),
	}
}

// templates are keyed by lower-case language code.
var templates = map[string]template{
	"en": newTemplate("en",
		`{{.Inviter}} invites you to {{.App}}`,
		`Hello,

{{.Inviter}} invites you to join {{.App}}.

Create your account here:
{{.Link}}

The invitation is valid for 30 days. If you do not know {{.Inviter}}, you can ignore this email.
`,
		`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>{{.Inviter}} invites you to join <strong>{{.App}}</strong>.</p>
<p><a href="{{.Link}}">Create your account</a></p>
<p>The invitation is valid for 30 days. If you do not know {{.Inviter}}, you can ignore this email.</p>
</body></html>
`),
	"de": newTemplate("de",
		`{{.Inviter}} lädt dich zu {{.App}} ein`,
		`Hallo,

{{.Inviter}} lädt dich ein, {{.App}} beizutreten.

Hier kannst du dein Konto anlegen:
{{.Link}}

Die Einladung ist 30 Tage gültig. Wenn du {{.Inviter}} nicht kennst, kannst du diese E-Mail ignorieren.
`,
		`<!DOCTYPE html>
<html lang="de"><body>
<p>Hallo,</p>
<p>{{.Inviter}} lädt dich ein, <strong>{{.App}}</strong> beizutreten.</p>
<p><a href="{{.Link}}">Konto anlegen</a></p>
<p>Die Einladung ist 30 Tage gültig. Wenn du {{.Inviter}} nicht kennst, kannst du diese E-Mail ignorieren.</p>
</body></html>
`),
}

// Language returns the supported language code for lang (compared case-insensitively, surrounding
// space ignored), and false when there is no invite in that language.
func Language(lang string) (string, bool) {
	lang = strings.ToLower(strings.TrimSpace(lang))
	_, ok := templates[lang]
	return lang, ok
}

// Compose renders the invite in lang, a code Language accepted.
func Compose(lang string, d Data) (mail.Message, error) {
	t, ok := templates[lang]
	if !ok {
		return mail.Message{}, fmt.Errorf("invite: no template for language %q", lang)
	}
	var subject, text, html bytes.Buffer
	if err := t.subject.Execute(&subject, d); err != nil {
		return mail.Message{}, fmt.Errorf("invite: subject: %w", err)
	}
	if err := t.text.Execute(&text, d); err != nil {
		return mail.Message{}, fmt.Errorf("invite: text: %w", err)
	}
	if err := t.html.Execute(&html, d); err != nil {
		return mail.Message{}, fmt.Errorf("invite: html: %w", err)
	}
	return mail.Message{To: d.To, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
