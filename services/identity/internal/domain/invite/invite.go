package invite

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"unicode"

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
		text:    texttemplate.Must(texttemplate.New(lang + "-text").Funcs(texttemplate.FuncMap{"quoted": quoted}).Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New(lang + "-html").Funcs(htmltemplate.FuncMap{"quoted": quoted}).Parse(html)),
	}
}

// templates are keyed by lower-case language code. The subject never carries the inviter's name:
// it is user-chosen text, and a subject is what a mail client shows as the sender's own words. In
// the body the name only appears as quoted data (see quoted), never as a sentence's subject, and
// never in the link.
var templates = map[string]template{
	"en": newTemplate("en",
		`Your invitation to {{.App}}`,
		`Hello,

you are invited to join {{.App}}. The invitation was sent by a user of {{.App}} who gave this name:
{{quoted .Inviter}}

Create your account here:
{{.Link}}

The invitation is valid for 30 days. If you do not know the sender, you can ignore this email.
`,
		`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>you are invited to join <strong>{{.App}}</strong>. The invitation was sent by a user of {{.App}} who gave this name:</p>
<blockquote>{{quoted .Inviter}}</blockquote>
<p><a href="{{.Link}}">Create your account</a></p>
<p>The invitation is valid for 30 days. If you do not know the sender, you can ignore this email.</p>
</body></html>
`),
	"de": newTemplate("de",
		`Deine Einladung zu {{.App}}`,
		`Hallo,

du bist eingeladen, {{.App}} beizutreten. Die Einladung kommt von einem Nutzer von {{.App}}, der diesen Namen angegeben hat:
{{quoted .Inviter}}

Hier kannst du dein Konto anlegen:
{{.Link}}

Die Einladung ist 30 Tage gültig. Wenn du den Absender nicht kennst, kannst du diese E-Mail ignorieren.
`,
		`<!DOCTYPE html>
<html lang="de"><body>
<p>Hallo,</p>
<p>du bist eingeladen, <strong>{{.App}}</strong> beizutreten. Die Einladung kommt von einem Nutzer von {{.App}}, der diesen Namen angegeben hat:</p>
<blockquote>{{quoted .Inviter}}</blockquote>
<p><a href="{{.Link}}">Konto anlegen</a></p>
<p>Die Einladung ist 30 Tage gültig. Wenn du den Absender nicht kennst, kannst du diese E-Mail ignorieren.</p>
</body></html>
`),
}

// maxQuoted bounds how much of a user-chosen name an invite shows: enough for any real name, too
// little for a paragraph of someone else's message.
const maxQuoted = 64

// quoted renders user-chosen text as data: on one line (control characters and line breaks
// become spaces), at most maxQuoted characters, in quotation marks. The HTML part escapes the
// result like any value.
func quoted(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }), " ")
	if r := []rune(s); len(r) > maxQuoted {
		s = string(r[:maxQuoted]) + "…"
	}
	return "“" + s + "”"
}

// Compose renders the invite in lang, a language package code (en or de).
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
