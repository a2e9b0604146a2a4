package locale

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"
)

// verbs finds the fmt verbs of a message, so the two languages can be held to take the same values.
var verbs = regexp.MustCompile(`%(\[\d+\])?[a-z]`)

// argCount is how many values a message takes: the highest index its verbs name.
func argCount(msg string) int {
	n, next := 0, 1
	for _, v := range verbs.FindAllStringSubmatch(msg, -1) {
		i := next
		if v[1] != "" {
			i = int(v[1][1] - '0')
		}
		n = max(n, i)
		next = i + 1
	}
	return n
}

func TestEveryMessageExistsInEveryLanguage(t *testing.T) {
	keys := slices.Sorted(maps.Keys(english))
	for lang, msgs := range languages {
		for _, k := range keys {
			text, ok := msgs[k]
			if !ok || strings.TrimSpace(text) == "" {
				t.Errorf("%s lacks %q", lang, k)
				continue
			}
			if got, want := argCount(text), argCount(english[k]); got != want {
				t.Errorf("%s %q takes %d values, English takes %d", lang, k, got, want)
			}
		}
		for k := range msgs {
			if _, ok := english[k]; !ok {
				t.Errorf("%s has %q, which English lacks", lang, k)
			}
		}
	}
}

func TestPrinterFormatsEachLanguageAndFallsBackToEnglish(t *testing.T) {
	for _, tc := range []struct {
		lang, want string
	}{
		{"de", "Deine Einladung zu Shop & Co"},
		{"en", "Your invitation to Shop & Co"},
		{"fr", "Your invitation to Shop & Co"},
		{"", "Your invitation to Shop & Co"},
	} {
		p := For(tc.lang)
		if got := p.T("invite.subject", "Shop & Co"); got != tc.want {
			t.Errorf("For(%q).T = %q, want %q", tc.lang, got, tc.want)
		}
	}
	if got := For("de").T("invite.invited", "Shop"); strings.Count(got, "Shop") != 2 {
		t.Errorf("an indexed verb is not reused: %q", got)
	}
	if got := (Printer{}).T("no.such.key"); got != "no.such.key" {
		t.Errorf("unknown key = %q", got)
	}
}

func TestUnknownKeysFindsEveryPrinterCallWithAKeyTheCatalogLacks(t *testing.T) {
	tmpl := template.Must(template.New("page").Parse(`{{define "a"}}{{.T "login.email"}}{{.T "no.such"}}{{end}}` +
		`{{define "b"}}{{range .Items}}{{$.T "missing.in.range" .}}{{end}}{{if .X}}{{.Page.T "also.missing"}}{{else}}{{.T "pay.title"}}{{end}}{{end}}` +
		`{{define "c"}}{{template "a" .}}{{with .Y}}{{printf "%s" ($.T "in.a.pipe")}}{{end}}{{end}}`))
	var trees = []*template.Template{}
	trees = append(trees, tmpl.Templates()...)
	var got []string
	for _, tt := range trees {
		got = append(got, UnknownKeys(tt.Tree)...)
	}
	slices.Sort(got)
	want := []string{"also.missing", "in.a.pipe", "missing.in.range", "no.such"}
	if !slices.Equal(got, want) {
		t.Fatalf("UnknownKeys = %v, want %v", got, want)
	}
}
