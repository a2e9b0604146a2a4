package locale

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
)

func TestNormalizeMapsLanguageAndCountryCodesToEnglishOrGerman(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"en", "en", true},
		{"EN", "en", true},
		{"de", "de", true},
		{"De", "de", true},
		{" de ", "de", true},
		{"AT", "de", true},
		{"at", "de", true},
		{"CH", "de", true},
		{"li", "de", true},
		{"DE", "de", true},
		{"US", "en", true},
		{"gb", "en", true},
		{"FR", "en", true}, // a country code first: the wrapper sends countries
		{"Ax", "en", true},
		{"", "", false},
		{"  ", "", false},
		{"xx", "", false}, // user-assigned, no country
		{"EU", "", false}, // exceptionally reserved, no country
		{"UK", "", false}, // reserved, not the code of the United Kingdom
		{"de-AT", "", false},
		{"DEU", "", false},
		{"english", "", false},
		{"e", "", false},
		{"A T", "", false},
		{"ÄT", "", false},
	} {
		got, ok := Normalize(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCheckNamesTheFieldOfARefusal(t *testing.T) {
	if got, err := Check("user.language", "ch"); err != nil || got != German {
		t.Fatalf("Check(ch) = %q, %v", got, err)
	}
	_, err := Check("user.language", "de-AT")
	if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != "user.language" || !strings.Contains(f.Message(), "ISO 3166-1") {
		t.Fatalf("Check(de-AT) = %v, want invalid user.language stating the rule", err)
	}
}

// The list holds every officially assigned code once, in upper case.
func TestTheCountryListHoldsTheTwoHundredFortyNineAssignedCodes(t *testing.T) {
	codes := strings.Fields(countries)
	seen := map[string]bool{}
	for _, c := range codes {
		if len(c) != 2 || strings.ToUpper(c) != c || seen[c] {
			t.Fatalf("bad or repeated code %q", c)
		}
		seen[c] = true
	}
	if len(codes) != 249 {
		t.Fatalf("%d codes, want 249", len(codes))
	}
}
