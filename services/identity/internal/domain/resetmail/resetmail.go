package resetmail

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	texttemplate "text/template"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/mail"
)

// Data is what a reset mail says.
type Data struct {
	To      string // the user's address
	App     string // the app's display name (or its name)
	Link    string // the hosted reset page with the link secret
	Code    string // the code to type on the page instead
	Minutes int    // how long link and code work
	// Accent (#rrggbb) and Logo (an https URL) are the app's branding, validated when the
	// operator set them; "" leaves the mail in the neutral look.
	Accent string
	Logo   string
}

// view is what the templates see: the data and the printer of the mail's language.
type view struct {
	Data
	locale.Printer
}

var (
	subjectTemplate = texttemplate.Must(texttemplate.New("subject").Parse(`{{.T "resetMail.subject" .App}}`))
	textTemplate    = texttemplate.Must(texttemplate.New("text").Parse(`{{.T "resetMail.greeting"}}

{{.T "resetMail.asked" .App}} {{.T "resetMail.openLink"}}
{{.Link}}

{{.T "resetMail.orCode"}}
{{.Code}}

{{.T "resetMail.validity" .Minutes}}
{{.T "resetMail.ignore"}}
`))
	htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
{{if .Logo}}<p><img src="{{.Logo}}" alt="{{.App}}" height="40"></p>
{{end}}<p>{{.T "resetMail.greeting"}}</p>
<p>{{.T "resetMail.asked" .App}}</p>
<p><a href="{{.Link}}"{{if .Accent}} style="color:{{.Accent}}"{{end}}>{{.T "resetMail.link"}}</a></p>
<p>{{.T "resetMail.orCode"}}</p>
<p style="font-size:1.5em;letter-spacing:.2em"><strong>{{.Code}}</strong></p>
<p>{{.T "resetMail.validity" .Minutes}}</p>
<p>{{.T "resetMail.ignore"}}</p>
</body></html>
`))
)

// Compose renders the mail in lang, a language Berth speaks (en or de; locale.Choose picks it).
func Compose(lang string, d Data) (mail.Message, error) {
	if lang != locale.English && lang != locale.German {
		return mail.Message{}, fmt.Errorf("reset mail: no messages in language %q", lang)
	}
	v := view{Data: d, Printer: locale.For(lang)}
	var subject, text, html bytes.Buffer
	for _, part := range []struct {
		name string
		run  func() error
	}{
		{"subject", func() error { return subjectTemplate.Execute(&subject, v) }},
		{"text", func() error { return textTemplate.Execute(&text, v) }},
		{"html", func() error { return htmlTemplate.Execute(&html, v) }},
	} {
		if err := part.run(); err != nil {
			return mail.Message{}, fmt.Errorf("reset mail: %s: %w", part.name, err)
		}
	}
	return mail.Message{To: d.To, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
