package webpage

import (
	_ "embed"
	"html/template"
	"net/url"
	"regexp"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/weborigin"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

//go:embed layout.html
var layoutHTML string

// Stylesheet is the layout's stylesheet without the accent colour (the custom property --accent,
// which every rule takes its colour from). A hosted page inlines it after its app's accent; a page
// whose policy forbids inline styles (the console) serves it as a file after its own :root rule
// and names that file in Head.Stylesheet.
//
//go:embed layout.css
var Stylesheet string

// PasskeyScript runs a page's WebAuthn ceremony (its comment says how a page sets it up). A
// hosted page inlines it under its answer's nonce with {{template "passkeyScript" nonce}}; the
// console, whose policy allows no inline script, serves it as a file.
//
//go:embed passkey.js
var PasskeyScript string

// Template parses a page that wraps its body in the shared layout and closes it with {{template
// "foot"}}. A development page opens it with {{template "head" "Title"}} (English, the neutral
// look); a hosted page with {{template "document" .Head}}, a Head carrying its language and the
// app's branding, and shows that branding with {{template "brand" .Head}} first in its <main>.
// Between them the page writes its <main> (class "wide" for a page of tables and commands rather
// than a form). So every hosted and development page looks alike and none carries a copy of the
// stylesheet.
func Template(name, page string) *template.Template {
	layout := template.Must(template.New(name).Funcs(template.FuncMap{"plain": plain, "stylesheet": stylesheet, "passkeyScript": passkeyScript}).Parse(layoutHTML))
	return template.Must(layout.Parse(page))
}

// Head is what the layout's document head and brand header need from a hosted page.
type Head struct {
	Title string
	Brand Brand
	// Stylesheet is the path of the stylesheet the page links instead of inlining the layout's
	// (""): a page under a policy without 'unsafe-inline' styles.
	Stylesheet string
	// Printer is the page's language: <html lang> and the layout's own messages.
	locale.Printer
}

// stylesheet is Stylesheet for the layout's <style> element: the embedded file, nothing from a
// request.
func stylesheet() template.CSS { return template.CSS(Stylesheet) } // #nosec G203 -- an embedded file

// passkeyScript is PasskeyScript for the layout's <script> element: the embedded file.
func passkeyScript() template.JS { return template.JS(PasskeyScript) } // #nosec G203 -- an embedded file

// plain is the head of a development page: its title, in English, unbranded.
func plain(title string) Head { return Head{Title: title} }

// Brand is an app's look on its hosted pages. The zero value is the neutral look.
type Brand struct {
	Name    string // display name, shown as the page's heading; "" shows none
	Accent  string // #rrggbb
	LogoURL string // https URL of an image
}

// BrandOf is the checked look of an app's branding as identity answers it; nil is the neutral look.
func BrandOf(b *identityv1.AppBranding) Brand {
	return Brand{Name: b.GetDisplayName(), Accent: b.GetAccentColor(), LogoURL: b.GetLogoUrl()}.Checked()
}

// defaultAccent is the neutral look's accent colour.
const defaultAccent = "#2563eb"

var accentShape = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// maxLogoURL bounds a logo URL, as identity does when it is set.
const maxLogoURL = 2048

// Checked is b with whatever does not hold its shape dropped: an accent that is not #rrggbb and a
// logo URL that is not an https URL with a host that can be named in the Content-Security-Policy.
// Identity validates both when they are set; the page checks again because an accent is written
// into a stylesheet and a logo's origin into a header, where nothing may slip through.
func (b Brand) Checked() Brand {
	if !accentShape.MatchString(b.Accent) {
		b.Accent = ""
	}
	if b.LogoSource() == "" {
		b.LogoURL = ""
	}
	return b
}

// AccentCSS is the accent colour for the stylesheet: the checked accent or the neutral one.
func (b Brand) AccentCSS() template.CSS {
	if accentShape.MatchString(b.Accent) {
		return template.CSS(b.Accent) // #rrggbb: nothing else can be in it
	}
	return defaultAccent
}

// LogoSource is the CSP source expression of the logo's origin, or "" for no usable logo.
func (b Brand) LogoSource() string {
	if b.LogoURL == "" || len(b.LogoURL) > maxLogoURL {
		return ""
	}
	u, err := url.Parse(b.LogoURL)
	if err != nil || u.Scheme != "https" {
		return ""
	}
	// An origin as weborigin serialises it holds only scheme, host (letters, digits, dots,
	// hyphens, an IP literal) and port: nothing that could end the source in the header.
	origin, ok := weborigin.Of(b.LogoURL)
	if !ok {
		return ""
	}
	return origin
}
