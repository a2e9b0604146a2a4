package resetmail

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"

	"github.com/berthhq/berth/pkg/mail"
)

// Data is what a reset mail says.
type Data struct {
	To      string // the user's address
	App     string // the app's name
	Link    string // the hosted reset page with the link secret
	Code    string // the code to type on the page instead
	Minutes int    // how long link and code work
}

// texts are one language's mail: its subject, text part and HTML part.
type texts struct {
	subject *texttemplate.Template
	text    *texttemplate.Template
	html    *htmltemplate.Template
}

func parse(lang, subject, text, html string) texts {
	return texts{
		subject: texttemplate.Must(texttemplate.New(lang + "-subject").Parse(subject)),
		text:    texttemplate.Must(texttemplate.New(lang + "-text").Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New(lang + "-html").Parse(html)),
	}
}

// languages are keyed by language code (domain/language). The mail says what to do when the
// reader did not ask for it, since anyone may type any address into the form.
var languages = map[string]texts{
	"en": parse("en",
		`Reset your password for {{.App}}`,
		`Hello,

someone asked to reset the password of the {{.App}} account of this address. To choose a new password, open this link:
{{.Link}}

Or type this code on the page where you asked:
{{.Code}}

The link and the code work once, for {{.Minutes}} minutes. Choosing a new password signs you out everywhere else.
If you did not ask for this, you can ignore this email: your password stays as it is.
`,
		`<!DOCTYPE html>
<html lang="en"><body>
<p>Hello,</p>
<p>someone asked to reset the password of the <strong>{{.App}}</strong> account of this address.</p>
<p><a href="{{.Link}}">Choose a new password</a></p>
<p>Or type this code on the page where you asked:</p>
<p style="font-size:1.5em;letter-spacing:.2em"><strong>{{.Code}}</strong></p>
<p>The link and the code work once, for {{.Minutes}} minutes. Choosing a new password signs you out everywhere else.</p>
<p>If you did not ask for this, you can ignore this email: your password stays as it is.</p>
</body></html>
`),
	"de": parse("de",
		`Passwort für {{.App}} zurücksetzen`,
		`Hallo,

jemand möchte das Passwort des {{.App}}-Kontos dieser Adresse zurücksetzen. Über diesen Link kannst du ein neues Passwort wählen:
{{.Link}}

Oder gib diesen Code auf der Seite ein, auf der du es angefordert hast:
{{.Code}}

Link und Code gelten einmal, für {{.Minutes}} Minuten. Ein neues Passwort meldet dich überall sonst ab.
Wenn du das nicht angefordert hast, kannst du diese E-Mail ignorieren: dein Passwort bleibt, wie es ist.
`,
		`<!DOCTYPE html>
<html lang="de"><body>
<p>Hallo,</p>
<p>jemand möchte das Passwort des <strong>{{.App}}</strong>-Kontos dieser Adresse zurücksetzen.</p>
<p><a href="{{.Link}}">Neues Passwort wählen</a></p>
<p>Oder gib diesen Code auf der Seite ein, auf der du es angefordert hast:</p>
<p style="font-size:1.5em;letter-spacing:.2em"><strong>{{.Code}}</strong></p>
<p>Link und Code gelten einmal, für {{.Minutes}} Minuten. Ein neues Passwort meldet dich überall sonst ab.</p>
<p>Wenn du das nicht angefordert hast, kannst du diese E-Mail ignorieren: dein Passwort bleibt, wie es ist.</p>
</body></html>
`),
}

// Compose renders the mail in lang (en or de; anything else is English, the user's language
// being unknown or one Berth does not speak).
func Compose(lang string, d Data) (mail.Message, error) {
	t, ok := languages[lang]
	if !ok {
		t = languages["en"]
	}
	var subject, text, html bytes.Buffer
	for _, part := range []struct {
		name string
		run  func() error
	}{
		{"subject", func() error { return t.subject.Execute(&subject, d) }},
		{"text", func() error { return t.text.Execute(&text, d) }},
		{"html", func() error { return t.html.Execute(&html, d) }},
	} {
		if err := part.run(); err != nil {
			return mail.Message{}, fmt.Errorf("reset mail: %s: %w", part.name, err)
		}
	}
	return mail.Message{To: d.To, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
