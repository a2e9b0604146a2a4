package password

import (
	"sync"
	"unicode/utf8"

	"github.com/trustelem/zxcvbn/frequency"
)

// common is the set of listed passwords long enough to pass the length rule; shorter ones are
// refused by that rule already, so keeping them would only cost memory.
//
// The list is the "passwords" frequency list that ships with github.com/trustelem/zxcvbn (MIT
// licence, a Go port of Dropbox's zxcvbn, also MIT): the 30,000 most frequent passwords of a public
// corpus of ten million leaked passwords, lower-cased. It is taken from the module rather than
// vendored so the repository carries no word list; about 11,600 entries have 8 characters or more.
// It is built on first use, so processes that never check a password never build it.
var common = sync.OnceValue(func() map[string]struct{} {
	list := frequency.FrequencyLists["passwords"]
	set := make(map[string]struct{}, len(list)/2)
	for _, pw := range list {
		if utf8.RuneCountInString(pw) >= MinLength {
			set[pw] = struct{}{}
		}
	}
	return set
})

// isCommon reports whether the lower-cased password is on the list.
func isCommon(lower string) bool {
	_, ok := common()[lower]
	return ok
}
