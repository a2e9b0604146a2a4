package recovery

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/berthhq/berth/pkg/locale"
)

func TestTheTemplatesUseOnlyMessagesOfTheCatalog(t *testing.T) {
	for _, tmpl := range pages.Templates() {
		if unknown := locale.UnknownKeys(tmpl.Tree); len(unknown) > 0 {
			t.Errorf("template %q uses keys the catalog lacks: %q", tmpl.Name(), unknown)
		}
	}
	for _, key := range []string{msgTitle, msgBadLink, msgBadRequest, msgInternal, msgUnavailable, msgExpired, msgBadEmail,
		msgTooMany, msgSpent, msgMissingCode, msgBadPasswordUse, msgForbidden} {
		if !locale.Has(key) {
			t.Errorf("message %q is not in the catalog", key)
		}
	}
}

func TestThePagesSpeakTheLanguageTheLinkAsksAndCarryIt(t *testing.T) {
	de := locale.For(locale.German)
	p, _, _ := newPage()
	q := request()
	q.Set("language", "de")
	s := open(t, p, q)
	wantPage(t, s.last, http.StatusOK, de.T("recover.title"), `lang="de"`)
	rec := s.submit(url.Values{"email": {"ada@example.com"}})
	wantPage(t, rec, http.StatusOK, de.T("recover.sent", "ada@example.com"), `name="language" value="de"`)

	// The mail's link names its language; the new-password form keeps it for its answer.
	link := open(t, p, url.Values{"token": {"s3cret"}, "language": {"de"}})
	wantPage(t, link.last, http.StatusOK, de.T("recover.password.title"), `name="language" value="de"`)
	if link.fields().Get("language") != "de" {
		t.Errorf("the new-password form does not carry the language: %v", link.fields())
	}
}
