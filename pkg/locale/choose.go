package locale

import (
	"net/url"
	"strings"

	"golang.org/x/text/language"
)

// Tags of the languages Berth speaks, in the order the matcher prefers them when a client accepts
// anything: English first, the fallback of every choice.
var (
	spoken  = []language.Tag{language.English, language.German}
	matcher = language.NewMatcher(spoken)
)

// maxAcceptLanguage bounds how much of an Accept-Language header is read. Real headers name a
// handful of languages in well under a hundred bytes; the bound keeps a hostile header cheap.
const maxAcceptLanguage = 512

// maxAcceptEntries bounds the entries read from Accept-Language, for the same reason.
const maxAcceptEntries = 16

// Choose is the language of a hosted page or a mail: requested (a page's `language`/`lng`
// parameter, a mail recipient's stored language) when it names a language Berth speaks, else the
// best match of acceptLanguage (an Accept-Language header, q-values honoured), else appDefault,
// else English. Pass "" for what a caller does not have.
func Choose(requested, acceptLanguage, appDefault string) string {
	if lang, ok := parseOne(requested); ok {
		return lang
	}
	if lang, ok := matchAccept(acceptLanguage); ok {
		return lang
	}
	if lang, ok := parseOne(appDefault); ok {
		return lang
	}
	return English
}

// Requested is the language a page's link or form asks for: its `language` parameter, else its
// `lng` parameter (the name the published browser SDK uses), whichever names a language Berth
// speaks first; "" when neither does.
func Requested(v url.Values) string {
	for _, name := range []string{"language", "lng"} {
		if lang, ok := parseOne(v.Get(name)); ok {
			return lang
		}
	}
	return ""
}

// parseOne reads one language value: what Normalize accepts (en, de, a country code), else a
// BCP 47 tag whose language Berth speaks (de-CH, en-GB).
func parseOne(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxTag {
		return "", false
	}
	if lang, ok := Normalize(v); ok {
		return lang, true
	}
	t, err := language.Parse(v)
	if err != nil {
		return "", false
	}
	return match([]language.Tag{t})
}

// maxTag bounds a single language value; BCP 47 tags in use are far shorter.
const maxTag = 64

// matchAccept reads an Accept-Language header. Each entry is parsed on its own, so one malformed
// entry does not discard the languages the others name; entries with q=0 are refusals and dropped.
func matchAccept(h string) (string, bool) {
	if h == "" || len(h) > maxAcceptLanguage {
		return "", false
	}
	type weighted struct {
		tag language.Tag
		q   float32
	}
	var entries []weighted
	for i, entry := range strings.Split(h, ",") {
		if i == maxAcceptEntries {
			break
		}
		tags, qs, err := language.ParseAcceptLanguage(entry)
		if err != nil || len(tags) != 1 {
			continue
		}
		entries = append(entries, weighted{tags[0], qs[0]})
	}
	// Highest weight first, the header's order among equals (a stable insertion sort: at most
	// maxAcceptEntries entries).
	for i := 1; i < len(entries); i++ {
		for j := i; j > 0 && entries[j].q > entries[j-1].q; j-- {
			entries[j], entries[j-1] = entries[j-1], entries[j]
		}
	}
	tags := make([]language.Tag, len(entries))
	for i, e := range entries {
		tags[i] = e.tag
	}
	return match(tags)
}

// match is the spoken language best matching tags (in preference order), if any matches at all:
// the matcher's fallback to English when nothing matches is not a match, so the app's default
// still gets its turn.
func match(tags []language.Tag) (string, bool) {
	if len(tags) == 0 {
		return "", false
	}
	_, i, conf := matcher.Match(tags...)
	if conf == language.No {
		return "", false
	}
	return spoken[i].String(), true
}
