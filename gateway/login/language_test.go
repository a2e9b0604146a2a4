package login

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// newPageOnly is newPage for a test that does not read the log.
func newPageOnly(fake *fakeLogin) *Page {
	p, _ := newPage(fake)
	return p
}

// english is a message as the English page shows it.
func english(key string) string { return locale.For(locale.English).T(key) }

// getWith is get with an Accept-Language header.
func getWith(t *testing.T, p *Page, q url.Values, acceptLanguage string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-login"), http.MethodGet, Path+"?"+q.Encode(), nil)
	req.Header.Set("Accept-Language", acceptLanguage)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

func TestThePageSpeaksGermanWhenTheLinkTheBrowserOrTheAppAsks(t *testing.T) {
	for _, tc := range []struct {
		name, param, value, accept, appDefault string
		carried                                bool // the form and the switch link carry language=de
	}{
		{"language=de", "language", "de", "", "", true},
		{"lng=de", "lng", "de", "", "", true},
		{"language=de over an English browser", "language", "de", "en-US,en;q=0.9", "", true},
		{"a Swiss browser", "", "", "de-CH", "", false},
		{"a browser that prefers German by weight", "", "", "en;q=0.5, de-AT;q=0.8", "", false},
		{"the app's default with a browser naming nothing Berth speaks", "", "", "fr", "de", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.branding = &identityv1.AppBranding{DefaultLanguage: tc.appDefault}
			q := linkQuery(signUpType)
			if tc.param != "" {
				q.Set(tc.param, tc.value)
			}
			body := wantPage(t, getWith(t, newPageOnly(fake), q, tc.accept), http.StatusOK)
			for _, want := range []string{`<html lang="de">`, "<title>Konto erstellen</title>", "E-Mail-Adresse", "Passwort",
				"weiter zu Demo App", "Du hast schon ein Konto?"} {
				if !strings.Contains(body, want) {
					t.Errorf("the page lacks %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, "Email address") {
				t.Error("the German page still shows English")
			}
			if got := strings.Contains(body, `name="language" value="de"`); got != tc.carried {
				t.Errorf("the form carries the language: %v, want %v", got, tc.carried)
			}
			if got := strings.Contains(body, "language=de&amp;"); got != tc.carried {
				t.Errorf("the switch link carries the language: %v, want %v", got, tc.carried)
			}
		})
	}
}

func TestThePageStaysEnglishWhenNothingAsksForGerman(t *testing.T) {
	for _, tc := range []struct{ name, param, accept, appDefault string }{
		{"no hint at all", "", "", ""},
		{"an English browser over a German app default", "", "en-GB", "de"},
		{"language=en over a German browser", "en", "de", "de"},
		{"a language Berth does not speak", "tlh", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.branding = &identityv1.AppBranding{DefaultLanguage: tc.appDefault}
			q := linkQuery("signIn")
			if tc.param != "" {
				q.Set("language", tc.param)
			}
			body := wantPage(t, getWith(t, newPageOnly(fake), q, tc.accept), http.StatusOK)
			if !strings.Contains(body, `<html lang="en">`) || !strings.Contains(body, "<h1>Sign in</h1>") {
				t.Errorf("not the English page:\n%s", body)
			}
		})
	}
}

// The posted form carries the link's language, so a refusal speaks it too; the form's action has
// no query, and a query added to it does not count.
func TestARefusedSubmissionAnswersInTheFormsLanguage(t *testing.T) {
	fake := newFake()
	fake.submitErr = wire(fault.Unauthenticated("wrong password"))
	p := newPageOnly(fake)
	token := webpage.NewToken()
	form := validForm("signIn", token)
	form.Set("language", "de")
	body := wantPage(t, post(t, p, form, token), http.StatusUnauthorized)
	if !strings.Contains(body, "E-Mail-Adresse oder Passwort ist nicht korrekt.") || !strings.Contains(body, `<html lang="de">`) {
		t.Errorf("the refusal is not German:\n%s", body)
	}
}

func TestTheErrorCardSpeaksTheLinksLanguage(t *testing.T) {
	fake := newFake()
	fake.describeErr = wire(fault.NotFound("app"))
	q := linkQuery("signIn")
	q.Set("lng", "de")
	body := wantPage(t, get(t, newPageOnly(fake), q), http.StatusBadRequest)
	for _, want := range []string{"<h1>Anmeldung nicht möglich</h1>", "Dieser Anmeldelink ist ungültig.", "Referenz: req-login"} {
		if !strings.Contains(body, want) {
			t.Errorf("the card lacks %q:\n%s", want, body)
		}
	}
	q = url.Values{"lng": {"de"}} // no client_id: refused before any backend call
	body = wantPage(t, getWith(t, newPageOnly(newFake()), q, ""), http.StatusBadRequest)
	if !strings.Contains(body, "Dieser Anmeldelink ist ungültig.") {
		t.Errorf("a broken link's card is not German:\n%s", body)
	}
}

func TestTheTemplatesUseOnlyMessagesOfTheCatalog(t *testing.T) {
	for _, tmpl := range pages.Templates() {
		if unknown := locale.UnknownKeys(tmpl.Tree); len(unknown) > 0 {
			t.Errorf("template %q uses keys the catalog lacks: %q", tmpl.Name(), unknown)
		}
	}
}

// Every message the page can show by outcome is a key of the catalog: the constants (read from
// the source, so a new one is covered without being listed here) and what each failure maps to.
func TestEveryFailureMessageIsAMessageOfTheCatalog(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "failure.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := 0
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || !strings.HasPrefix(spec.Names[0].Name, "msg") {
			return true
		}
		lit, ok := spec.Values[0].(*ast.BasicLit)
		if !ok {
			t.Errorf("%s is not a string literal", spec.Names[0].Name)
			return true
		}
		key, _ := strconv.Unquote(lit.Value)
		consts++
		if !locale.Has(key) {
			t.Errorf("%s = %q is not in the catalog", spec.Names[0].Name, key)
		}
		return true
	})
	if consts < 10 {
		t.Fatalf("found %d message constants: the test is not reading failure.go", consts)
	}
	var errs []error
	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		errs = append(errs, status.Error(c, "x"))
	}
	for _, field := range []string{"email", "password", "name"} {
		errs = append(errs, wire(fault.InvalidField(field, "x")))
	}
	for _, err := range errs {
		for _, signUp := range []bool{false, true} {
			if f := submitFailure(err, signUp); !locale.Has(f.message) {
				t.Errorf("submitFailure(%v) = %q", err, f.message)
			}
		}
		if f := describeFailure(err); !locale.Has(f.message) {
			t.Errorf("describeFailure(%v) = %q", err, f.message)
		}
	}
}
