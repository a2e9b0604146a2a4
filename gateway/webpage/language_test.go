package webpage

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestLanguageReadsTheLinkThenTheBrowserThenTheAppDefault(t *testing.T) {
	for _, tc := range []struct {
		target, accept, appDefault, want string
	}{
		{"/login?language=de", "en", "en", "de"},
		{"/login?lng=de", "", "en", "de"},
		{"/login", "de-CH", "en", "de"},
		{"/login", "fr", "de", "de"},
		{"/login", "", "", "en"},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		r.Header.Set("Accept-Language", tc.accept)
		if got := Language(r, tc.appDefault); got != tc.want {
			t.Errorf("GET %s (Accept-Language %q, app %q) = %q, want %q", tc.target, tc.accept, tc.appDefault, got, tc.want)
		}
	}
}

// A form is posted to a fixed action: the language it carries is a hidden field, and a query
// string added to the action must not override it, as for every field of the form.
func TestAPostedFormCarriesItsLanguageInTheBody(t *testing.T) {
	r := httptest.NewRequest("POST", "/login?language=en", strings.NewReader(url.Values{"language": {"de"}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if got := Language(r, "en"); got != "de" {
		t.Errorf("Language = %q, want the body's de", got)
	}
}
