package domain

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
)

func TestNewBrandingNormalisesWhatItAccepts(t *testing.T) {
	b, err := NewBranding("  Schön & Co ", " #0A7F3E ", " https://cdn.example.test/logo.png?v=2 ", "DE")
	if err != nil {
		t.Fatal(err)
	}
	want := Branding{DisplayName: "Schön & Co", AccentColor: "#0a7f3e", LogoURL: "https://cdn.example.test/logo.png?v=2", DefaultLanguage: "de"}
	if b != want {
		t.Errorf("NewBranding = %+v, want %+v", b, want)
	}
	if b, err := NewBranding("", "", "", ""); err != nil || b != (Branding{}) {
		t.Errorf("the neutral look = %+v, %v", b, err)
	}
}

func TestNewBrandingRefusesWhatAPageCouldNotShowSafely(t *testing.T) {
	for _, tc := range []struct {
		name, display, accent, logo, lang, field string
	}{
		{"a control character in the name", "Shop\nURGENT", "", "", "", "branding.displayName"},
		{"an overlong name", strings.Repeat("x", 101), "", "", "", "branding.displayName"},
		{"a named colour", "", "red", "", "", "branding.accentColor"},
		{"a short colour", "", "#abc", "", "", "branding.accentColor"},
		{"CSS after the colour", "", "#000000;background:url(x)", "", "", "branding.accentColor"},
		{"a plain http logo", "", "", "http://cdn.example.test/logo.png", "", "branding.logoUrl"},
		{"a data URL", "", "", "data:image/png;base64,AAAA", "", "branding.logoUrl"},
		{"a javascript URL", "", "", "javascript:alert(1)", "", "branding.logoUrl"},
		{"credentials in the logo URL", "", "", "https://user:pw@cdn.example.test/l.png", "", "branding.logoUrl"},
		{"a fragment", "", "", "https://cdn.example.test/l.png#x", "", "branding.logoUrl"},
		{"a host that could break the header", "", "", "https://cdn.example.test;script-src*/l.png", "", "branding.logoUrl"},
		{"an overlong logo URL", "", "", "https://cdn.example.test/" + strings.Repeat("a", 2048), "", "branding.logoUrl"},
		{"a language Berth does not speak", "", "", "", "fr", "branding.defaultLanguage"},
		{"a country code is not a default language", "", "", "", "AT", "branding.defaultLanguage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBranding(tc.display, tc.accent, tc.logo, tc.lang)
			if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != tc.field {
				t.Errorf("NewBranding = %v, want invalid %s", err, tc.field)
			}
		})
	}
}
