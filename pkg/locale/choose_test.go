package locale

import (
	"net/url"
	"strings"
	"testing"
)

func TestChoosePrefersTheRequestThenAcceptLanguageThenTheAppDefaultThenEnglish(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		requested, accept, appDefault string
		want                          string
	}{
		{"nothing at all", "", "", "", "en"},
		{"the app's default", "", "", "de", "de"},
		{"an unspoken app default", "", "", "fr", "en"},
		{"the request over everything", "de", "en", "en", "de"},
		{"the request in English over a German browser", "en", "de", "de", "en"},
		{"a country code requested", "AT", "", "", "de"},
		{"a BCP 47 tag requested", "de-CH", "", "", "de"},
		{"a language code Berth does not speak falls through", "xx", "de", "", "de"},
		{"a country code is a language, as for route 18: FR reads English", "FR", "de", "", "en"},
		{"a garbage request falls through", "x<y>", "", "de", "de"},
		{"Accept-Language over the app default", "", "de-CH", "en", "de"},
		{"Accept-Language's region variant", "", "en-GB", "de", "en"},
		{"q-values order the entries", "", "en;q=0.4, de;q=0.9", "", "de"},
		{"equal q-values keep the header's order", "", "de, en", "", "de"},
		{"a language Berth does not speak is skipped", "", "fr-FR, fr;q=0.9, de;q=0.8, en;q=0.7", "", "de"},
		{"only unspoken languages leave the app default", "", "fr, es;q=0.5", "de", "de"},
		{"q=0 refuses a language", "", "de;q=0, fr", "", "en"},
		{"a malformed entry does not spoil the others", "", "!!bad!!, de;q=0.5", "", "de"},
		{"a malformed weight is skipped", "", "en;q=x, de;q=0.1", "", "de"},
		{"Swiss German finds German", "", "gsw", "en", "de"},
		{"an overlong header is ignored", "", strings.Repeat("fr, ", 200) + "de", "en", "en"},
		{"spaces around a requested value", " de ", "", "", "de"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Choose(tc.requested, tc.accept, tc.appDefault); got != tc.want {
				t.Errorf("Choose(%q, %q, %q) = %q, want %q", tc.requested, tc.accept, tc.appDefault, got, tc.want)
			}
		})
	}
}

func TestRequestedReadsLanguageThenLng(t *testing.T) {
	for _, tc := range []struct {
		query, want string
	}{
		{"language=de", "de"},
		{"lng=de", "de"},
		{"language=en&lng=de", "en"},
		{"language=xx&lng=de", "de"},
		{"language=de-AT", "de"},
		{"", ""},
		{"lng=klingon", ""},
	} {
		v, _ := url.ParseQuery(tc.query)
		if got := Requested(v); got != tc.want {
			t.Errorf("Requested(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}
