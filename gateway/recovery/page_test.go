package recovery

import (
	"bytes"
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// fakeLogin is an in-test LoginServiceClient for the reset RPCs and the link check.
type fakeLogin struct {
	identityv1.LoginServiceClient // sign-up and sign-in, which these pages never call

	mu                 sync.Mutex
	startErr, checkErr error
	completeErr        error
	describes          int
	starts             []*identityv1.StartPasswordResetRequest
	checks             []*identityv1.CheckPasswordResetRequest
	completes          []*identityv1.CompletePasswordResetRequest
	flows              int
}

func (f *fakeLogin) DescribeLogin(_ context.Context, in *identityv1.DescribeLoginRequest, _ ...grpc.CallOption) (*identityv1.LoginContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes++
	return &identityv1.LoginContext{AppId: in.GetClientId(), AppName: "Demo App"}, nil
}

func (f *fakeLogin) StartPasswordReset(_ context.Context, in *identityv1.StartPasswordResetRequest, _ ...grpc.CallOption) (*identityv1.PasswordResetFlow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, in)
	if f.startErr != nil {
		return nil, f.startErr
	}
	f.flows++
	return &identityv1.PasswordResetFlow{FlowId: strings.Repeat(string(rune('0'+f.flows)), 8) + "-1111-4222-8333-944445555666"}, nil
}

func (f *fakeLogin) CheckPasswordReset(_ context.Context, in *identityv1.CheckPasswordResetRequest, _ ...grpc.CallOption) (*identityv1.PasswordResetContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks = append(f.checks, in)
	if f.checkErr != nil {
		return nil, f.checkErr
	}
	return &identityv1.PasswordResetContext{AppName: "Demo App", RedirectUri: redirectURI}, nil
}

func (f *fakeLogin) CompletePasswordReset(_ context.Context, in *identityv1.CompletePasswordResetRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completes = append(f.completes, in)
	if f.completeErr != nil {
		return nil, f.completeErr
	}
	return &identityv1.LoginRedirect{Url: redirectURI + "?code=c0de&state=st4te"}, nil
}

const (
	appID       = "4f1c8e0a-1111-4222-8333-944445555666"
	redirectURI = "https://app.example.com/callback"
	newPassword = "a brand new passphrase"
)

func wire(err error) error { return grpcx.StatusOf(err).Err() }

// en is a message as the English page shows it.
func en(key string, args ...any) string { return locale.For(locale.English).T(key, args...) }

func newPage() (*Page, *fakeLogin, *bytes.Buffer) {
	fake, logs := &fakeLogin{}, &bytes.Buffer{}
	return New(fake, slog.New(slog.NewJSONHandler(logs, nil)), nil), fake, logs
}

func request() url.Values {
	return url.Values{"client_id": {appID}, "redirect_uri": {redirectURI}, "state": {"st4te"}, "nonce": {"n0nce"}, "scope": {"openid email"}}
}

func get(t *testing.T, p *Page, q url.Values) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, Path+"?"+q.Encode(), nil))
	return rec
}

// session is a browser on the pages: it keeps the CSRF cookie and posts the last page's form.
type session struct {
	t      *testing.T
	p      *Page
	cookie *http.Cookie
	last   *httptest.ResponseRecorder
}

// open GETs the pages with q, as a browser following a link does.
func open(t *testing.T, p *Page, q url.Values) *session {
	t.Helper()
	s := &session{t: t, p: p, last: get(t, p, q)}
	s.keepCookie()
	return s
}

func (s *session) keepCookie() {
	for _, c := range s.last.Result().Cookies() {
		if c.Name == "berth_login_csrf" {
			s.cookie = c
		}
	}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// fields are the hidden fields of the last page's form.
func (s *session) fields() url.Values {
	s.t.Helper()
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(s.last.Body.String(), -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	if len(v) == 0 {
		s.t.Fatalf("no form on the page (%d):\n%s", s.last.Code, s.last.Body)
	}
	return v
}

// submit posts the last page's hidden fields with typed.
func (s *session) submit(typed url.Values) *httptest.ResponseRecorder {
	s.t.Helper()
	form := s.fields()
	for k, v := range typed {
		form[k] = v
	}
	req := httptest.NewRequestWithContext(s.t.Context(), http.MethodPost, Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "203.0.113.9:51234"
	if s.cookie != nil {
		req.AddCookie(s.cookie)
	}
	s.last = httptest.NewRecorder()
	s.p.ServeHTTP(s.last, req)
	s.keepCookie()
	return s.last
}

func wantPage(t *testing.T, rec *httptest.ResponseRecorder, status int, texts ...string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d:\n%s", rec.Code, status, rec.Body)
	}
	body := html.UnescapeString(rec.Body.String())
	for _, s := range texts {
		if !strings.Contains(body, s) {
			t.Fatalf("page lacks %q:\n%s", s, body)
		}
	}
}

func TestTheEmailFormCarriesTheAuthorizationRequest(t *testing.T) {
	p, _, _ := newPage()
	s := open(t, p, request())
	wantPage(t, s.last, http.StatusOK, "Reset your password", "for Demo App", `href="/login?client_id=`, "Back to sign in")
	f := s.fields()
	for k, v := range request() {
		if f.Get(k) != v[0] {
			t.Errorf("hidden %s = %q, want %q", k, f.Get(k), v[0])
		}
	}
	if f.Get("step") != stepEmail || s.cookie == nil || s.cookie.Path != "/login" || f.Get("csrf_token") != s.cookie.Value {
		t.Errorf("step %q, CSRF cookie %+v, field %q", f.Get("step"), s.cookie, f.Get("csrf_token"))
	}
}

func TestEveryAddressGetsTheSamePageAndTheCodeForm(t *testing.T) {
	p, fake, _ := newPage()
	var bodies []string
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		s := open(t, p, request())
		rec := s.submit(url.Values{"email": {email}})
		wantPage(t, rec, http.StatusOK, "Check your inbox", "If an account exists for "+email+", we sent it a link and a code.")
		if f := s.fields(); f.Get("step") != stepCode || f.Get("flow") == "" || f.Get("client_id") != appID || f.Get("email") != email {
			t.Errorf("code form fields = %v", f)
		}
		// Apart from the address and the random flow and CSRF values, the two pages are one.
		body := strings.ReplaceAll(rec.Body.String(), email, "EMAIL")
		body = regexp.MustCompile(`value="[0-9a-zA-Z_-]{8,}(-[0-9a-f-]+)?"`).ReplaceAllString(body, `value="X"`)
		bodies = append(bodies, body)
	}
	if bodies[0] != bodies[1] {
		t.Errorf("the answers differ:\n%s\n---\n%s", bodies[0], bodies[1])
	}
	st := fake.starts[0]
	if st.GetEmail() != "ada@example.com" || st.GetClientIp() != "203.0.113.9" || st.GetParams().GetState() != "st4te" || st.GetParams().GetNonce() != "n0nce" {
		t.Errorf("start request = %v", st)
	}
}

func TestTooManyRequestsAnswer429OnTheEmailForm(t *testing.T) {
	p, fake, _ := newPage()
	fake.startErr = wire(fault.Exhausted(time.Hour, "too many password reset requests for ada@example.com"))
	s := open(t, p, request())
	rec := s.submit(url.Values{"email": {"ada@example.com"}})
	wantPage(t, rec, http.StatusTooManyRequests, en(msgTooMany), `name="step" value="email"`)
	if rec.Header().Get("Retry-After") != "3600" || strings.Contains(rec.Body.String(), "too many password reset requests") {
		t.Errorf("Retry-After %q; the backend's text must not show", rec.Header().Get("Retry-After"))
	}
}

func TestTheMailLinkShowsTheNewPasswordFormAndOnlyItsPostChangesAnything(t *testing.T) {
	p, fake, _ := newPage()
	s := open(t, p, url.Values{"token": {"s3cret"}})
	wantPage(t, s.last, http.StatusOK, "Choose a new password", "for Demo App")
	if len(fake.checks) != 1 || fake.checks[0].GetProof().GetLink() != "s3cret" || len(fake.completes) != 0 {
		t.Fatalf("checks %v, completes %d", fake.checks, len(fake.completes))
	}
	if csp := s.last.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://app.example.com;") {
		t.Errorf("CSP %q does not let the post go on to the app", csp)
	}
	rec := s.submit(url.Values{"password": {newPassword}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != redirectURI+"?code=c0de&state=st4te" {
		t.Fatalf("post = %d to %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	c := fake.completes[0]
	if c.GetProof().GetLink() != "s3cret" || c.GetPassword() != newPassword || c.GetClientIp() != "203.0.113.9" {
		t.Errorf("complete request = %v", c)
	}
}

func TestTheCodeLeadsToTheNewPasswordFormAndOnToTheApp(t *testing.T) {
	p, fake, _ := newPage()
	s := open(t, p, request())
	s.submit(url.Values{"email": {"ada@example.com"}})
	flow := s.fields().Get("flow")
	rec := s.submit(url.Values{"code": {" 123456 "}})
	wantPage(t, rec, http.StatusOK, "Choose a new password")
	if pr := fake.checks[0].GetProof(); pr.GetClientId() != appID || pr.GetFlowId() != flow || pr.GetCode() != "123456" || pr.GetLink() != "" {
		t.Errorf("check proof = %v", pr)
	}
	rec = s.submit(url.Values{"password": {newPassword}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("post = %d:\n%s", rec.Code, rec.Body)
	}
	if pr := fake.completes[0].GetProof(); pr.GetFlowId() != flow || pr.GetCode() != "123456" {
		t.Errorf("complete proof = %v", pr)
	}
}

func TestWrongSpentAndUnknownLinksAndCodesAnswerOneText(t *testing.T) {
	p, fake, _ := newPage()
	fake.checkErr = wire(fault.Invalid("code", "this link or code is no longer valid"))
	link := open(t, p, url.Values{"token": {"spent"}})
	wantPage(t, link.last, http.StatusBadRequest, "Password reset unavailable", en(msgSpent))

	s := open(t, p, request())
	s.submit(url.Values{"email": {"ada@example.com"}})
	rec := s.submit(url.Values{"code": {"000000"}})
	wantPage(t, rec, http.StatusBadRequest, en(msgSpent), `name="step" value="code"`)

	// A code spent between its check and the new password gets the same text.
	fake.checkErr = nil
	s.submit(url.Values{"code": {"123456"}})
	fake.completeErr = wire(fault.Invalid("code", "this link or code is no longer valid"))
	wantPage(t, s.submit(url.Values{"password": {newPassword}}), http.StatusBadRequest, en(msgSpent))
}

func TestARefusedPasswordAsksAgainAndAnInactiveUserIsRefused(t *testing.T) {
	p, fake, _ := newPage()
	s := open(t, p, url.Values{"token": {"s3cret"}})
	fake.completeErr = wire(fault.Invalid("password", "must be 8 to 128 characters long").WithReason("length"))
	wantPage(t, s.submit(url.Values{"password": {"short"}}), http.StatusBadRequest, en("login.error.passwordLength"), `name="token" value="s3cret"`)
	wantPage(t, s.submit(url.Values{"password": {"bad\x01"}}), http.StatusBadRequest, en(msgBadPasswordUse))
	fake.completeErr = wire(fault.Forbidden("user is frozen or deleted"))
	wantPage(t, s.submit(url.Values{"password": {newPassword}}), http.StatusForbidden, en(msgForbidden))
}

func TestBadInputIsRefusedBeforeIdentityIsAsked(t *testing.T) {
	p, fake, _ := newPage()
	bad := request()
	bad.Set("state", "st\x00te")
	wantPage(t, get(t, p, bad), http.StatusBadRequest, en(msgBadLink))
	wantPage(t, get(t, p, url.Values{"token": {"\xff"}}), http.StatusBadRequest, en(msgSpent))

	s := open(t, p, request())
	wantPage(t, s.submit(url.Values{"email": {"ada\x00@example.com"}}), http.StatusBadRequest, en(msgBadEmail))
	wantPage(t, s.submit(url.Values{"email": {strings.Repeat("a", maxEmail) + "@example.com"}}), http.StatusBadRequest, en(msgBadEmail))
	wantPage(t, s.submit(url.Values{"email": {"  "}}), http.StatusBadRequest, en(msgBadEmail))
	s.cookie = nil
	wantPage(t, s.submit(url.Values{"email": {"ada@example.com"}}), http.StatusForbidden, en(msgExpired))
	if len(fake.starts) != 0 {
		t.Errorf("identity was asked %d times", len(fake.starts))
	}
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPut, Path, nil)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	wantPage(t, rec, http.StatusMethodNotAllowed, en(msgBadRequest))
}
