package webpage

import (
	"net/http"

	"github.com/berthhq/berth/pkg/locale"
)

// Language is the language a hosted page answers r in (locale.Choose): the `language` or `lng`
// parameter of the link (of the posted form for a POST, whose query never counts), then the
// browser's Accept-Language, then the app's default. A POST's form must be parsed already.
func Language(r *http.Request, appDefault string) string {
	params := r.URL.Query()
	if r.Method == http.MethodPost {
		params = r.PostForm
	}
	return locale.Choose(locale.Requested(params), r.Header.Get("Accept-Language"), appDefault)
}
