package locale

import "testing"

// Whatever a link and a browser send, the choice is a language Berth speaks, and never a panic:
// the values come straight from the request.
func FuzzChoose(f *testing.F) {
	for _, seed := range [][3]string{
		{"de", "", ""}, {"", "de-CH,de;q=0.9,en;q=0.8", ""}, {"x", "*;q=0.5", "de"}, {"de-u-co-phonebk", "en;q=x,,;", ""},
		{"zh-Hant-TW", "i-klingon, x-private;q=1", "en"}, {"\x00", "de;q=1.5, en;q=-1", "AT"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, requested, accept, appDefault string) {
		if got := Choose(requested, accept, appDefault); got != English && got != German {
			t.Fatalf("Choose(%q, %q, %q) = %q", requested, accept, appDefault, got)
		}
	})
}
