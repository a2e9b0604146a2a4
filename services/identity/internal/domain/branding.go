package domain

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/weborigin"
)

// Branding is an app's look on its hosted pages and mails, and the language they use when neither
// the link nor the browser names one. The zero value is the neutral look in English.
type Branding struct {
	// DisplayName is the heading of the hosted pages and the app's name in mails ("" shows the
	// app's name).
	DisplayName string
	// AccentColor is #rrggbb in lower case, the colour of buttons and links ("" the neutral one).
	AccentColor string
	// LogoURL is an https URL of the image shown above the pages' heading ("" for none).
	LogoURL string
	// DefaultLanguage is en or de ("" is English).
	DefaultLanguage string
}

// maxDisplayName bounds a display name: it is a heading and a mail's subject, not a paragraph.
const maxDisplayName = 100

var accentShape = regexp.MustCompile(`^#[0-9a-f]{6}$`)

// NewBranding checks and normalises an operator's branding. The logo must be an https URL whose
// origin is a valid web origin (pkg/weborigin), so it can be named in a Content-Security-Policy: the
// hosted page allows images from that origin only, and only on its own answer.
func NewBranding(displayName, accentColor, logoURL, defaultLanguage string) (Branding, error) {
	b := Branding{DisplayName: strings.TrimSpace(displayName), AccentColor: strings.ToLower(strings.TrimSpace(accentColor))}
	if err := checkText("branding.displayName", b.DisplayName, maxDisplayName); err != nil {
		return Branding{}, err
	}
	if b.AccentColor != "" && !accentShape.MatchString(b.AccentColor) {
		return Branding{}, fault.InvalidField("branding.accentColor", "must be a colour #rrggbb")
	}
	logo, err := checkLogoURL(strings.TrimSpace(logoURL))
	if err != nil {
		return Branding{}, err
	}
	b.LogoURL = logo
	switch lang := strings.ToLower(strings.TrimSpace(defaultLanguage)); lang {
	case "", locale.English, locale.German:
		b.DefaultLanguage = lang
	default:
		return Branding{}, fault.InvalidField("branding.defaultLanguage", "must be en or de")
	}
	return b, nil
}

// checkLogoURL accepts "" or an absolute https URL without credentials or fragment, of at most
// maxURL characters, with a valid host.
func checkLogoURL(raw string) (string, error) {
	const field = "branding.logoUrl"
	if raw == "" {
		return "", nil
	}
	if err := checkText(field, raw, maxURL); err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", fault.InvalidField(field, "must be an https URL without credentials or fragment")
	}
	if _, ok := weborigin.Of(raw); !ok {
		return "", fault.InvalidField(field, "must name a valid host in ASCII (punycode for international names)")
	}
	return raw, nil
}
