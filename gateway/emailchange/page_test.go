package emailchange

import (
	"bytes"
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const linkSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I"

// en prints the English texts the tests look for.
var en = locale.For(locale.English)

// fakeIdentity records the links it is asked about and answers as programmed.
type fakeIdentity struct {
	mu          sync.Mutex
	branding    *identityv1.AppBranding
	describeErr error
	confirmErr  error
	describes   []string
	confirms    []string
}

func (f *fakeIdentity) DescribeEmailChange(_ context.Context, in *identityv1.EmailChangeLink, _ ...grpc.CallOption) (*identityv1.EmailChangeContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes = append(f.describes, in.GetToken())
	if f.describeErr != nil {
		return nil, f.describeErr
	}
	return &identityv1.EmailChangeContext{AppName: "Shop <&> Co", Email: "new@example.test", Branding: f.branding}, nil
}

func (f *fakeIdentity) ConfirmEmailChange(_ context.Context, in *identityv1.EmailChangeLink, _ ...grpc.CallOption) (*identityv1.EmailChangeContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirms = append(f.confirms, in.GetToken())
	if f.confirmErr != nil {
		return nil, f.confirmErr
	}
	return &identityv1.EmailChangeContext{AppName: "Shop <&> Co", Email: "new@example.test"}, nil
}

func newPage(fake *fakeIdentity) (*Page, *bytes.Buffer) {
	logs := &bytes.Buffer{}
	// The process's logger, which puts the request id on every line from the context.
	return New(fake, logx.New(logs, "info")), logs
}

func get(t *testing.T, p *Page, rawQuery string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-change"), http.MethodGet, Path+"?"+rawQuery, nil)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

// post submits form with cookie as the CSRF cookie ("" sends none).
func post(t *testing.T, p *Page, form url.Values, cookie string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-change"), http.MethodPost, Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: csrf.Cookie, Value: cookie})
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

func hiddenFields(body string) map[string]string {
	fields := map[string]string{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		fields[m[1]] = html.UnescapeString(m[2])
	}
	return fields
}

// wantPage checks the status and the headers every answer of a hosted page carries.
func wantPage(t *testing.T, rec *httptest.ResponseRecorder, status int) string {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body:\n%s", rec.Code, status, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if got := rec.Header().Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy = %q: the link's token could leak to another site", got)
	}
	return rec.Body.String()
}

func TestOpeningTheLinkShowsTheAddressAndAButtonWithoutConfirming(t *testing.T) {
	fake := &fakeIdentity{}
	p, _ := newPage(fake)
	rec := get(t, p, "token="+linkSecret)
	body := wantPage(t, rec, http.StatusOK)
	if !strings.Contains(body, "new@example.test") || !strings.Contains(body, "Shop &lt;&amp;&gt; Co") || !strings.Contains(body, `<button type="submit">Confirm</button>`) {
		t.Errorf("page lacks the address, the escaped app name or the button:\n%s", body)
	}
	fields := hiddenFields(body)
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == csrf.Cookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != Path || fields[webpage.CSRFField] != cookie.Value {
		t.Fatalf("CSRF cookie %+v, field %q", cookie, fields[webpage.CSRFField])
	}
	if fields["token"] != linkSecret {
		t.Errorf("form carries token %q", fields["token"])
	}
	if len(fake.describes) != 1 || len(fake.confirms) != 0 {
		t.Errorf("GET made %d describes and %d confirmations, want 1 and 0", len(fake.describes), len(fake.confirms))
	}
}

func TestPressingConfirmConfirmsTheLinkOnce(t *testing.T) {
	fake := &fakeIdentity{}
	p, logs := newPage(fake)
	token := webpage.NewToken()
	rec := post(t, p, url.Values{webpage.CSRFField: {token}, "token": {linkSecret}}, token)
	body := wantPage(t, rec, http.StatusOK)
	if !strings.Contains(body, en.T("emailChange.done.title")) || !strings.Contains(body, "new@example.test") {
		t.Errorf("done page:\n%s", body)
	}
	if len(fake.confirms) != 1 || fake.confirms[0] != linkSecret {
		t.Errorf("confirmations = %v", fake.confirms)
	}
	if strings.Contains(logs.String(), linkSecret) {
		t.Error("the link's token reached the log")
	}
}

func TestAForgedOrExpiredFormDoesNotConfirm(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cookie, field string
	}{
		{"no cookie", "", webpage.NewToken()},
		{"field differs from the cookie", webpage.NewToken(), webpage.NewToken()},
		{"cookie of another shape", "short", "short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeIdentity{}
			p, _ := newPage(fake)
			rec := post(t, p, url.Values{webpage.CSRFField: {tc.field}, "token": {linkSecret}}, tc.cookie)
			body := wantPage(t, rec, http.StatusForbidden)
			if !strings.Contains(body, html.EscapeString(en.T(msgExpired))) || hiddenFields(body)["token"] != linkSecret {
				t.Errorf("want the form again with %q:\n%s", msgExpired, body)
			}
			if len(fake.confirms) != 0 {
				t.Errorf("a forged form confirmed: %v", fake.confirms)
			}
		})
	}
}

func TestBadLinksAndRefusalsGetTheErrorCardInTheirStatus(t *testing.T) {
	long := strings.Repeat("a", maxToken+1)
	cases := []struct {
		name       string
		query      string
		describe   error
		status     int
		message    string
		wantLookup bool
	}{
		{"no token", "", nil, http.StatusBadRequest, msgBadLink, false},
		{"two tokens", "token=a&token=b", nil, http.StatusBadRequest, msgBadLink, false},
		{"a control character", "token=a%00b", nil, http.StatusBadRequest, msgBadLink, false},
		{"invalid UTF-8", "token=a%FFb", nil, http.StatusBadRequest, msgBadLink, false},
		{"too long", "token=" + long, nil, http.StatusBadRequest, msgBadLink, false},
		{"used, retired or expired", "token=" + linkSecret, status.Error(codes.InvalidArgument, "this link or code is no longer valid"), http.StatusBadRequest, msgBadLink, true},
		{"identity down", "token=" + linkSecret, status.Error(codes.Unavailable, "down"), http.StatusServiceUnavailable, msgUnavailable, true},
		{"identity failing", "token=" + linkSecret, status.Error(codes.Internal, "boom"), http.StatusInternalServerError, msgInternal, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeIdentity{describeErr: tc.describe}
			p, logs := newPage(fake)
			body := wantPage(t, get(t, p, tc.query), tc.status)
			if !strings.Contains(body, html.EscapeString(en.T(tc.message))) || !strings.Contains(body, en.T("page.reference", "req-change")) {
				t.Errorf("page lacks %q and its reference:\n%s", tc.message, body)
			}
			if (len(fake.describes) == 1) != tc.wantLookup {
				t.Errorf("identity asked %d times", len(fake.describes))
			}
			if !strings.Contains(logs.String(), "req-change") {
				t.Errorf("the answer is not logged with its request id: %s", logs)
			}
		})
	}
}

func TestAConfirmationIdentityRefusesGetsTheErrorCard(t *testing.T) {
	fake := &fakeIdentity{confirmErr: status.Error(codes.InvalidArgument, "this link or code is no longer valid")}
	p, _ := newPage(fake)
	token := webpage.NewToken()
	body := wantPage(t, post(t, p, url.Values{webpage.CSRFField: {token}, "token": {linkSecret}}, token), http.StatusBadRequest)
	if !strings.Contains(body, html.EscapeString(en.T(msgBadLink))) {
		t.Errorf("page:\n%s", body)
	}
}

func TestOnlyUrlEncodedFormsOfBoundedSizeAreRead(t *testing.T) {
	p, _ := newPage(&fakeIdentity{})
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path, strings.NewReader(`{"token":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	wantPage(t, rec, http.StatusUnsupportedMediaType)

	req = httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path, strings.NewReader("token="+strings.Repeat("a", maxForm)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	wantPage(t, rec, http.StatusRequestEntityTooLarge)

	req = httptest.NewRequestWithContext(t.Context(), http.MethodPut, Path, nil)
	rec = httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	wantPage(t, rec, http.StatusMethodNotAllowed)
}

func TestThePageSpeaksTheBrowsersLanguageInTheAppsBranding(t *testing.T) {
	fake := &fakeIdentity{branding: &identityv1.AppBranding{DisplayName: "Laden", AccentColor: "#0a7f3e", DefaultLanguage: "en"}}
	p, _ := newPage(fake)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, Path+"?token="+linkSecret, nil)
	req.Header.Set("Accept-Language", "de-CH, en;q=0.5")
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	body := wantPage(t, rec, http.StatusOK)
	de := locale.For(locale.German)
	for _, want := range []string{`<html lang="de">`, html.EscapeString(de.T("emailChange.title")), "--accent:#0a7f3e", "<span>Laden</span>", html.EscapeString(de.T("emailChange.forApp", "Laden"))} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
}

func TestThePageUsesOnlyMessagesOfTheCatalog(t *testing.T) {
	for _, tmpl := range pages.Templates() {
		if unknown := locale.UnknownKeys(tmpl.Tree); len(unknown) > 0 {
			t.Errorf("template %q uses keys the catalog lacks: %q", tmpl.Name(), unknown)
		}
	}
	for _, key := range []string{msgBadLink, msgBadRequest, msgExpired, msgInternal, msgUnavailable} {
		if !locale.Has(key) {
			t.Errorf("message %q is not in the catalog", key)
		}
	}
}
