package invite

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"unicode"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/mail"
)

// Data is what an invite says.
type Data struct {
	To      string // the invitee's address
	Inviter string // the inviting user's name (or address)
	App     string // the app's display name (or its name)
	Link    string // the hosted sign-up page with the referral code
	// Accent (#rrggbb) and Logo (an https URL) are the app's branding, both validated when the
	// operator set them; "" leaves the mail in the neutral look.
	Accent string
	Logo   string
}

// view is what the templates see: the data and the printer of the mail's language.
type view struct {
	Data
	locale.Printer
}

var funcs = map[string]any{"quoted": quoted}

// The subject never carries the inviter's name: it is user-chosen text, and a subject is what a
// mail client shows as the sender's own words. In the body the name only appears as quoted data
// (see quoted), never as a sentence's subject, and never in the link. Every sentence is a message
// of pkg/locale.
var (
	subjectTemplate = texttemplate.Must(texttemplate.New("subject").Parse(`{{.T "invite.subject" .App}}`))
	textTemplate    = texttemplate.Must(texttemplate.New("text").Funcs(funcs).Parse(`{{.T "invite.greeting"}}

{{.T "invite.invited" .App}}
{{quoted .Inviter}}

{{.T "invite.createHere"}}
{{.Link}}

{{.T "invite.validity"}}
`))
	htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><body>
{{if .Logo}}<p><img src="{{.Logo}}" alt="{{.App}}" height="40"></p>
{{end}}<p>{{.T "invite.greeting"}}</p>
<p>{{.T "invite.invited" .App}}</p>
<blockquote>{{quoted .Inviter}}</blockquote>
<p><a href="{{.Link}}"{{if .Accent}} style="color:{{.Accent}}"{{end}}>{{.T "invite.createLink"}}</a></p>
<p>{{.T "invite.validity"}}</p>
</body></html>
`))
)

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

// Compose renders the invite in lang, a language Berth speaks (en or de; locale.Choose picks it).
func Compose(lang string, d Data) (mail.Message, error) {
	if lang != locale.English && lang != locale.German {
		return mail.Message{}, fmt.Errorf("invite: no messages in language %q", lang)
	}
	v := view{Data: d, Printer: locale.For(lang)}
	var subject, text, html bytes.Buffer
	if err := subjectTemplate.Execute(&subject, v); err != nil {
		return mail.Message{}, fmt.Errorf("invite: subject: %w", err)
	}
	if err := textTemplate.Execute(&text, v); err != nil {
		return mail.Message{}, fmt.Errorf("invite: text: %w", err)
	}
	if err := htmlTemplate.Execute(&html, v); err != nil {
		return mail.Message{}, fmt.Errorf("invite: html: %w", err)
	}
	return mail.Message{To: d.To, Subject: subject.String(), Text: text.String(), HTML: html.String()}, nil
}
