package login

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/grpcx"
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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// fakeLogin is an in-test LoginServiceClient: it records every request and answers as programmed.
type fakeLogin struct {
	identityv1.LoginServiceClient // the reset RPCs, which this page never calls

	mu          sync.Mutex
	describeErr error
	appName     string
	branding    *identityv1.AppBranding
	submitErr   error
	redirectURL string
	// verification, when set, is what SignUp, SignIn and ResendVerification answer instead of a
	// redirect ("check your inbox").
	verification string
	// verifyURL and verifyErr answer VerifyEmailCode and VerifyEmailLink.
	verifyURL string
	verifyErr error
	describes []*identityv1.DescribeLoginRequest
	signUps   []*identityv1.SignUpRequest
	signIns   []*identityv1.SignInRequest
	resends   []*identityv1.ResendVerificationRequest
	codes     []*identityv1.VerifyEmailCodeRequest
	links     []*identityv1.VerifyEmailLinkRequest
	// providers are the app's identity providers DescribeLogin names.
	providers []*identityv1.LoginProvider
	// secondFactor, when set, is the flow SignIn answers (enrol: an enrolling one); factorErr and
	// recovery answer VerifySecondFactor.
	secondFactor   string
	enrol          bool
	factorErr      error
	recovery       []string
	enrolments     []*identityv1.SecondFactorFlow
	passkeyOptions string
	enrolOptions   string
	signInOptions  string
	passkeySignIns []*identityv1.PasskeySignInRequest
	factors        []*identityv1.VerifySecondFactorRequest
}

func (f *fakeLogin) StartSignInEnrolment(_ context.Context, in *identityv1.SecondFactorFlow, _ ...grpc.CallOption) (*identityv1.TotpKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enrolments = append(f.enrolments, in)
	return &identityv1.TotpKey{OtpauthUrl: "otpauth://totp/Demo:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Demo", Secret: "JBSWY3DPEHPK3PXP"}, nil
}

// enrolOptions, when set, is what StartSignInPasskeyEnrolment answers (an enrolling sign-in may
// create a passkey); unset, it refuses as identity does without a public URL.
func (f *fakeLogin) StartSignInPasskeyEnrolment(_ context.Context, in *identityv1.SecondFactorFlow, _ ...grpc.CallOption) (*identityv1.PasskeyCeremony, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enrolments = append(f.enrolments, in)
	if f.enrolOptions == "" {
		return nil, grpcx.StatusOf(fault.Unavailable(0, "passkeys need the deployment's public URL")).Err()
	}
	return &identityv1.PasskeyCeremony{Options: f.enrolOptions, State: "enrol-state"}, nil
}

// passkeyOptions, when set, is what StartPasskeyAssertion answers (a user with passkeys).
func (f *fakeLogin) StartPasskeyAssertion(_ context.Context, _ *identityv1.SecondFactorFlow, _ ...grpc.CallOption) (*identityv1.PasskeyCeremony, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.passkeyOptions == "" {
		return &identityv1.PasskeyCeremony{}, nil
	}
	return &identityv1.PasskeyCeremony{Options: f.passkeyOptions, State: "sealed-state"}, nil
}

// signInOptions, when set, makes DescribeLogin offer passkey sign-in and StartPasskeySignIn
// answer these options; passkeySignIns records PasskeySignIn.
func (f *fakeLogin) StartPasskeySignIn(_ context.Context, _ *identityv1.DescribeLoginRequest, _ ...grpc.CallOption) (*identityv1.PasskeyCeremony, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &identityv1.PasskeyCeremony{Options: f.signInOptions, State: "sign-in-state"}, nil
}

func (f *fakeLogin) PasskeySignIn(_ context.Context, in *identityv1.PasskeySignInRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passkeySignIns = append(f.passkeySignIns, in)
	if f.factorErr != nil {
		return nil, f.factorErr
	}
	return &identityv1.LoginRedirect{Url: f.redirectURL}, nil
}

func (f *fakeLogin) VerifySecondFactor(_ context.Context, in *identityv1.VerifySecondFactorRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.factors = append(f.factors, in)
	if f.factorErr != nil {
		return nil, f.factorErr
	}
	return &identityv1.LoginRedirect{Url: f.redirectURL, RecoveryCodes: f.recovery}, nil
}

func (f *fakeLogin) DescribeLogin(_ context.Context, in *identityv1.DescribeLoginRequest, _ ...grpc.CallOption) (*identityv1.LoginContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes = append(f.describes, in)
	if f.describeErr != nil {
		return nil, f.describeErr
	}
	return &identityv1.LoginContext{AppId: in.GetClientId(), AppName: f.appName, Branding: f.branding, Providers: f.providers, PasskeySignIn: f.signInOptions != ""}, nil
}

func (f *fakeLogin) SignUp(_ context.Context, in *identityv1.SignUpRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signUps = append(f.signUps, in)
	return f.redirect()
}

// redirect is the programmed answer of a form submission; the caller holds mu.
func (f *fakeLogin) redirect() (*identityv1.LoginRedirect, error) {
	if f.submitErr != nil {
		return nil, f.submitErr
	}
	if f.verification != "" {
		return &identityv1.LoginRedirect{Verification: f.verification}, nil
	}
	if f.secondFactor != "" {
		return &identityv1.LoginRedirect{SecondFactor: f.secondFactor, Enrol: f.enrol}, nil
	}
	return &identityv1.LoginRedirect{Url: f.redirectURL}, nil
}

func (f *fakeLogin) ResendVerification(_ context.Context, in *identityv1.ResendVerificationRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resends = append(f.resends, in)
	return f.redirect()
}

func (f *fakeLogin) VerifyEmailCode(_ context.Context, in *identityv1.VerifyEmailCodeRequest, _ ...grpc.CallOption) (*identityv1.VerifiedEmail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.codes = append(f.codes, in)
	if f.verifyErr != nil {
		return nil, f.verifyErr
	}
	return &identityv1.VerifiedEmail{Url: f.verifyURL}, nil
}

func (f *fakeLogin) VerifyEmailLink(_ context.Context, in *identityv1.VerifyEmailLinkRequest, _ ...grpc.CallOption) (*identityv1.VerifiedEmail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.links = append(f.links, in)
	if f.verifyErr != nil {
		return nil, f.verifyErr
	}
	return &identityv1.VerifiedEmail{Url: f.verifyURL}, nil
}

// DescribeVerification answers the programmed app for the link "s3cret" while no link was met
// (a met link names no app any more), and InvalidArgument for every other link.
func (f *fakeLogin) DescribeVerification(_ context.Context, in *identityv1.VerifyEmailLinkRequest, _ ...grpc.CallOption) (*identityv1.LoginContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.GetToken() != "s3cret" || len(f.links) > 0 {
		return nil, status.Error(codes.InvalidArgument, "this link or code is no longer valid")
	}
	return &identityv1.LoginContext{AppId: appID, AppName: f.appName, Branding: f.branding}, nil
}

func (f *fakeLogin) SignIn(_ context.Context, in *identityv1.SignInRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signIns = append(f.signIns, in)
	return f.redirect()
}

func (f *fakeLogin) submits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.signUps) + len(f.signIns)
}

const (
	appID       = "4f1c8e0a-1111-4222-8333-944445555666"
	redirectURI = "https://app.example.com/callback"
	password    = "correct horse battery staple"
	referral    = "R3F-42"
)

func newFake() *fakeLogin {
	return &fakeLogin{appName: "Demo App", redirectURL: redirectURI + "?code=c0de&state=st4te&service=email&client_id=" + appID}
}

// newPage returns the page over fake and the buffer its log goes to.
func newPage(fake *fakeLogin) (*Page, *bytes.Buffer) {
	logs := &bytes.Buffer{}
	return New(fake, slog.New(slog.NewJSONHandler(logs, nil)), nil), logs
}

// linkQuery is a valid authorization link's query.
func linkQuery(typ string) url.Values {
	return url.Values{
		"client_id": {appID}, "redirect_uri": {redirectURI}, "state": {"st4te"},
		"type": {typ}, "nonce": {"n0nce"}, "scope": {"openid email"}, "referral": {referral},
	}
}

func get(t *testing.T, p *Page, q url.Values) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-login"), http.MethodGet, Path+"?"+q.Encode(), nil)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

// post submits form with cookie as the CSRF cookie ("" sends none) from peer address 203.0.113.9.
func post(t *testing.T, p *Page, form url.Values, cookie string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "203.0.113.9:51234"
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: cookie})
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

// validForm is a complete submission of the form of type typ carrying token.
func validForm(typ, token string) url.Values {
	f := linkQuery(typ)
	f.Set(webpage.CSRFField, token)
	f.Set("email", "ada@example.com")
	f.Set("password", password)
	if typ == signUpType {
		f.Set("name", "Ada")
	}
	return f
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// hiddenFields returns the form's hidden fields, unescaped.
func hiddenFields(t *testing.T, body string) map[string]string {
	t.Helper()
	fields := map[string]string{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		fields[m[1]] = html.UnescapeString(m[2])
	}
	if len(fields) == 0 {
		t.Fatalf("no form in page:\n%s", body)
	}
	return fields
}

var switchLink = regexp.MustCompile(`<p class="switch">[^<]*<a href="([^"]*)">`)

// switchQuery returns the query of the page's link to the other form, unescaped.
func switchQuery(t *testing.T, body string) url.Values {
	t.Helper()
	m := switchLink.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no switch link in page:\n%s", body)
	}
	u, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil || u.Path != Path {
		t.Fatalf("switch link %q (%v)", m[1], err)
	}
	return u.Query()
}

// csrfCookieOf returns the CSRF cookie the response sets, failing when there is none.
func csrfCookieOf(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == csrfCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie set; headers %v", csrfCookie, rec.Header())
	return nil
}

// wantPage checks status, HTML content type and the security headers every answer carries.
func wantPage(t *testing.T, rec *httptest.ResponseRecorder, status int) string {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body:\n%s", rec.Code, status, rec.Body.String())
	}
	h := rec.Header()
	if ct := h.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	csp := h.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "style-src 'unsafe-inline'", "form-action 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, d)
		}
	}
	for k, v := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if loc := h.Get("Location"); loc != "" {
		t.Errorf("page answer carries Location %q", loc)
	}
	return rec.Body.String()
}

func TestShowRendersTheFormCarryingTheLinkParameters(t *testing.T) {
	for _, typ := range []string{"signIn", signUpType} {
		t.Run(typ, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			rec := get(t, p, linkQuery(typ))
			body := wantPage(t, rec, http.StatusOK)

			fields := hiddenFields(t, body)
			for k, want := range map[string]string{
				"client_id": appID, "redirect_uri": redirectURI, "state": "st4te",
				"nonce": "n0nce", "scope": "openid email", "referral": referral, "type": typ,
			} {
				if fields[k] != want {
					t.Errorf("hidden %s = %q, want %q", k, fields[k], want)
				}
			}
			c := csrfCookieOf(t, rec)
			if !webpage.WellFormedToken(c.Value) || fields[webpage.CSRFField] != c.Value {
				t.Errorf("csrf field %q does not repeat cookie %q", fields[webpage.CSRFField], c.Value)
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != Path {
				t.Errorf("cookie attributes: HttpOnly=%v SameSite=%v Path=%q", c.HttpOnly, c.SameSite, c.Path)
			}
			if !strings.Contains(body, "Demo App") {
				t.Errorf("page does not name the app")
			}
			if got := strings.Contains(body, `name="name"`); got != (typ == signUpType) {
				t.Errorf("name field shown = %v on %s", got, typ)
			}
			// Sign-up states the password rule, and the browser holds its length; sign-in does not,
			// since older passwords are checked as they were set.
			ruled := strings.Contains(body, `minlength="8" maxlength="128"`) && strings.Contains(body, "8 to 128 characters")
			if ruled != (typ == signUpType) {
				t.Errorf("password rule stated = %v on %s", ruled, typ)
			}
			other := map[string]string{"signIn": signUpType, signUpType: "signIn"}[typ]
			want := linkQuery(other)
			if got := switchQuery(t, body); got.Encode() != want.Encode() {
				t.Errorf("switch link query = %v, want %v", got, want)
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://app.example.com;") {
				t.Errorf("form-action does not allow the redirect origin: %q", csp)
			}
			if len(fake.describes) != 1 || fake.describes[0].GetClientId() != appID || fake.describes[0].GetRedirectUri() != redirectURI {
				t.Errorf("DescribeLogin calls = %v", fake.describes)
			}
		})
	}
}

func TestShowKeepsAnExistingCSRFCookie(t *testing.T) {
	p, _ := newPage(newFake())
	token := webpage.NewToken()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, Path+"?"+linkQuery("signIn").Encode(), nil)
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: token})
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	body := wantPage(t, rec, http.StatusOK)
	if got := hiddenFields(t, body)[webpage.CSRFField]; got != token {
		t.Errorf("csrf field = %q, want the existing cookie token %q (another open tab must stay valid)", got, token)
	}
}

func TestShowAnswersBadLinksWithAnErrorPageNotARedirect(t *testing.T) {
	without := func(key string) url.Values { q := linkQuery("signIn"); q.Del(key); return q }
	long := linkQuery("signIn")
	long.Set("state", strings.Repeat("s", maxParam+1))
	longReferral := linkQuery("signIn")
	longReferral.Set("referral", strings.Repeat("r", maxParam+1))
	tests := []struct {
		name        string
		query       url.Values
		describeErr error
		status      int
		// reason is what the info line "login refused" says; "" expects an error line instead.
		reason string
	}{
		{"missing client_id", without("client_id"), nil, http.StatusBadRequest, "lacks client_id, redirect_uri or state"},
		{"missing redirect_uri", without("redirect_uri"), nil, http.StatusBadRequest, "lacks client_id, redirect_uri or state"},
		{"missing state", without("state"), nil, http.StatusBadRequest, "lacks client_id, redirect_uri or state"},
		{"oversized parameter", long, nil, http.StatusBadRequest, "too long"},
		{"oversized referral", longReferral, nil, http.StatusBadRequest, "too long"},
		{"unknown app", linkQuery("signIn"), wire(fault.NotFound("no such app")), http.StatusBadRequest, "NotFound: no such app"},
		{"disabled app", linkQuery("signIn"), wire(fault.Forbidden("app disabled")), http.StatusBadRequest, "PermissionDenied: app disabled"},
		{"unregistered redirect_uri", linkQuery("signIn"), wire(fault.Invalid("redirect_uri", "not registered")), http.StatusBadRequest, "InvalidArgument (redirect_uri): not registered"},
		{"identity unavailable", linkQuery("signIn"), status.Error(codes.Unavailable, "connection refused"), http.StatusServiceUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			fake.describeErr = tt.describeErr
			p, logs := newPage(fake)
			rec := get(t, p, tt.query)
			body := wantPage(t, rec, tt.status)
			if strings.Contains(body, "<form") {
				t.Errorf("error page renders a form")
			}
			if tt.describeErr != nil && strings.Contains(body, status.Convert(tt.describeErr).Message()) {
				t.Errorf("error page shows the backend's message")
			}
			if len(rec.Result().Cookies()) != 0 {
				t.Errorf("error page sets cookies: %v", rec.Result().Cookies())
			}
			wantRefusal(t, logs.String(), tt.reason)
		})
	}
}

// wantRefusal checks the page logged why it refused the request: one info line with the reason and
// the request id the error card shows; reason "" wants an error line (a fault of ours) instead.
func wantRefusal(t *testing.T, logs, reason string) {
	t.Helper()
	if reason == "" {
		if !strings.Contains(logs, `"level":"ERROR"`) {
			t.Errorf("no error logged: %s", logs)
		}
		return
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(logs), &line); err != nil {
		t.Fatalf("want one log line, got %q", logs)
	}
	if line["level"] != "INFO" || line["msg"] != "login refused" || line["request_id"] != "req-login" ||
		!strings.Contains(fmt.Sprint(line["reason"]), reason) {
		t.Errorf("log %v, want an info line \"login refused\" with reason %q and the request id", line, reason)
	}
}

func TestSubmitRefusesAMissingOrWrongCSRFToken(t *testing.T) {
	token := webpage.NewToken()
	tests := []struct {
		name          string
		cookie, field string
	}{
		{"no cookie", "", token},
		{"no field", token, ""},
		{"different tokens", token, webpage.NewToken()},
		{"malformed cookie repeated in field", "attacker-chosen", "attacker-chosen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			rec := post(t, p, validForm("signIn", tt.field), tt.cookie)
			body := wantPage(t, rec, http.StatusForbidden)
			if fake.submits() != 0 {
				t.Errorf("backend called despite the CSRF failure")
			}
			if !strings.Contains(body, html.EscapeString(english(msgExpired))) {
				t.Errorf("page lacks the expiry message:\n%s", body)
			}
			// The re-rendered form carries a usable token so the user can simply submit again.
			if fields := hiddenFields(t, body); fields[webpage.CSRFField] != csrfCookieOf(t, rec).Value || !webpage.WellFormedToken(fields[webpage.CSRFField]) {
				t.Errorf("re-rendered form has no usable token")
			}
		})
	}
}

func TestSubmitRedirectsToTheBackendURLOnSuccess(t *testing.T) {
	for _, typ := range []string{"signIn", signUpType} {
		t.Run(typ, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			token := webpage.NewToken()
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path+"?state=from-query",
				strings.NewReader(validForm(typ, token).Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			req.Header.Set("X-Forwarded-For", "198.51.100.77")
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
			req.RemoteAddr = "203.0.113.9:51234"
			req.AddCookie(&http.Cookie{Name: csrfCookie, Value: token})
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)

			if rec.Code != http.StatusSeeOther {
				t.Fatalf("status = %d, want 303; body:\n%s", rec.Code, rec.Body.String())
			}
			if loc := rec.Header().Get("Location"); loc != fake.redirectURL {
				t.Errorf("Location = %q, want %q", loc, fake.redirectURL)
			}
			var params *identityv1.LoginParams
			var email, pw, ip, agent string
			if typ == signUpType {
				if len(fake.signUps) != 1 || len(fake.signIns) != 0 {
					t.Fatalf("calls: %d sign-ups, %d sign-ins", len(fake.signUps), len(fake.signIns))
				}
				in := fake.signUps[0]
				params, email, pw, ip, agent = in.GetParams(), in.GetEmail(), in.GetPassword(), in.GetClientIp(), in.GetUserAgent()
				if in.GetName() != "Ada" {
					t.Errorf("name = %q", in.GetName())
				}
			} else {
				if len(fake.signIns) != 1 || len(fake.signUps) != 0 {
					t.Fatalf("calls: %d sign-ups, %d sign-ins", len(fake.signUps), len(fake.signIns))
				}
				in := fake.signIns[0]
				params, email, pw, ip, agent = in.GetParams(), in.GetEmail(), in.GetPassword(), in.GetClientIp(), in.GetUserAgent()
			}
			if params.GetClientId() != appID || params.GetRedirectUri() != redirectURI || params.GetState() != "st4te" ||
				params.GetNonce() != "n0nce" || params.GetScope() != "openid email" || params.GetReferral() != referral {
				t.Errorf("params = %v (a query string must not override the form)", params)
			}
			if email != "ada@example.com" || pw != password {
				t.Errorf("credentials = %q / %q", email, pw)
			}
			if ip != "203.0.113.9" {
				t.Errorf("client_ip = %q, want the TCP peer 203.0.113.9 (X-Forwarded-For is not trusted)", ip)
			}
			if agent != "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0" {
				t.Errorf("user_agent = %q, want the browser's User-Agent", agent)
			}
		})
	}
}

func TestReferralIsOptionalAndCarriedFromLinkToSignUp(t *testing.T) {
	tests := []struct {
		name     string
		referral string // "" leaves the parameter out of the link
	}{
		{"invite link with a referral code", "INV-7f3a"},
		{"plain link without one", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			link := linkQuery("signIn")
			link.Del("referral")
			if tt.referral != "" {
				link.Set("referral", tt.referral)
			}

			// Link -> sign-in form -> switch link -> sign-up form -> POST, as a browser would go.
			signIn := wantPage(t, get(t, p, link), http.StatusOK)
			toSignUp := switchQuery(t, signIn)
			if _, present := toSignUp["referral"]; present != (tt.referral != "") {
				t.Errorf("switch link carries referral = %v, want %v", present, tt.referral != "")
			}
			rec := get(t, p, toSignUp)
			signUp := wantPage(t, rec, http.StatusOK)
			fields := hiddenFields(t, signUp)
			if fields["referral"] != tt.referral || fields["type"] != signUpType {
				t.Fatalf("sign-up form hidden referral = %q, type = %q", fields["referral"], fields["type"])
			}
			form := url.Values{}
			for k, v := range fields {
				form.Set(k, v)
			}
			form.Set("email", "ada@example.com")
			form.Set("password", password)
			if rec := post(t, p, form, csrfCookieOf(t, rec).Value); rec.Code != http.StatusSeeOther {
				t.Fatalf("status = %d, want 303; body:\n%s", rec.Code, rec.Body.String())
			}
			if len(fake.signUps) != 1 {
				t.Fatalf("%d sign-ups, want 1", len(fake.signUps))
			}
			if got := fake.signUps[0].GetParams().GetReferral(); got != tt.referral {
				t.Errorf("LoginParams.referral = %q, want %q", got, tt.referral)
			}
		})
	}
}

func TestSubmitFailureStatusAndMessage(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		err     error
		status  int
		message string
	}{
		{"bad credentials", "signIn", wire(fault.Unauthenticated("wrong password for ada@example.com")), http.StatusUnauthorized, msgBadCredentials},
		{"unknown email answers like a wrong password", "signIn", wire(fault.Unauthenticated("no user ada@example.com")), http.StatusUnauthorized, msgBadCredentials},
		{"frozen user", "signIn", wire(fault.Forbidden("user frozen")), http.StatusForbidden, msgForbidden},
		{"attempt limit", "signIn", status.Error(codes.ResourceExhausted, "limit"), http.StatusTooManyRequests, msgTooMany},
		{"invalid email", signUpType, wire(fault.Invalid("email", "bad email")), http.StatusBadRequest, msgBadEmail},
		{"password of an unnamed rule on sign-up", signUpType, wire(fault.Invalid("password", "too short")), http.StatusBadRequest, msgBadPassword},
		{"too short a password on sign-up names the length rule", signUpType, wire(fault.Invalid("password", "too short").WithReason("length")), http.StatusBadRequest, msgPasswordLength},
		{"a common password on sign-up names the list", signUpType, wire(fault.Invalid("password", "listed").WithReason("common")), http.StatusBadRequest, msgPasswordCommon},
		{"a password holding the email's name on sign-up names that rule", signUpType, wire(fault.Invalid("password", "has the email").WithReason("email")), http.StatusBadRequest, msgPasswordEmail},
		{"a blank password on sign-up names that rule", signUpType, wire(fault.Invalid("password", "only whitespace").WithReason("blank")), http.StatusBadRequest, msgPasswordBlank},
		{"email taken", signUpType, status.Error(codes.AlreadyExists, "ada@example.com exists"), http.StatusBadRequest, msgSignUpFailed},
		{"other invalid input on sign-in", "signIn", wire(fault.Invalid("password", "too long")), http.StatusBadRequest, msgSignInFailed},
		{"backend fault", "signIn", wire(fault.Internal(errors.New("pq: connection reset"))), http.StatusInternalServerError, msgInternal},
		{"backend unavailable", "signIn", wire(fault.Unavailable(0, "sign-up is not available")), http.StatusServiceUnavailable, msgUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			fake.submitErr = tt.err
			p, logs := newPage(fake)
			token := webpage.NewToken()
			rec := post(t, p, validForm(tt.typ, token), token)
			body := wantPage(t, rec, tt.status)
			if !strings.Contains(body, html.EscapeString(english(tt.message))) {
				t.Errorf("page lacks %q:\n%s", tt.message, body)
			}
			if strings.Contains(body, status.Convert(tt.err).Message()) {
				t.Errorf("page shows the backend's message")
			}
			if strings.Contains(body, password) || strings.Contains(logs.String(), password) {
				t.Errorf("the password is echoed")
			}
			if !strings.Contains(body, `value="ada@example.com"`) {
				t.Errorf("email is not kept in the re-rendered form")
			}
			if got := hiddenFields(t, body)["state"]; got != "st4te" {
				t.Errorf("re-rendered form lost the parameters: state = %q", got)
			}
			if got := strings.Contains(logs.String(), `"level":"ERROR"`); got != (tt.status >= 500) {
				t.Errorf("logged an error = %v for status %d: %s", got, tt.status, logs)
			}
			if tt.status < 500 && !strings.Contains(logs.String(), `"msg":"login refused"`) {
				t.Errorf("the refusal is not logged: %s", logs)
			}
		})
	}
}

func TestSubmitWithoutCredentialsDoesNotCallTheBackend(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	token := webpage.NewToken()
	form := validForm("signIn", token)
	form.Set("password", "")
	body := wantPage(t, post(t, p, form, token), http.StatusBadRequest)
	if fake.submits() != 0 {
		t.Errorf("backend called without a password")
	}
	if !strings.Contains(body, html.EscapeString(english(msgMissingCredentials))) {
		t.Errorf("page lacks the missing-credentials message")
	}
}

func TestSubmitRefusesUnusableBodies(t *testing.T) {
	token := webpage.NewToken()
	tests := []struct {
		name        string
		contentType string
		body        string
		status      int
	}{
		{"JSON body", "application/json", `{"email":"ada@example.com"}`, http.StatusUnsupportedMediaType},
		{"no content type", "", validForm("signIn", token).Encode(), http.StatusUnsupportedMediaType},
		{"over 64 KiB", "application/x-www-form-urlencoded", "email=" + strings.Repeat("a", maxForm), http.StatusRequestEntityTooLarge},
		{"form without the link parameters", "application/x-www-form-urlencoded", "email=a%40b.c&password=x&" + webpage.CSRFField + "=" + token, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path, strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			req.AddCookie(&http.Cookie{Name: csrfCookie, Value: token})
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)
			wantPage(t, rec, tt.status)
			if fake.submits() != 0 {
				t.Errorf("backend called")
			}
		})
	}
}

func TestHostileInputIsEscaped(t *testing.T) {
	const attack = `"><script>alert(1)</script><a href="javascript:alert(2)">`
	fake := newFake()
	fake.appName = attack
	fake.submitErr = wire(fault.Unauthenticated("no"))
	p, _ := newPage(fake)

	q := linkQuery("signIn")
	q.Set("state", attack)
	q.Set("nonce", attack)
	q.Set("referral", attack)
	rec := get(t, p, q)
	body := wantPage(t, rec, http.StatusOK)
	if strings.Contains(body, "<script>") || strings.Contains(body, `href="javascript:`) {
		t.Fatalf("hostile input rendered as markup:\n%s", body)
	}
	if got := hiddenFields(t, body)["state"]; got != attack {
		t.Errorf("state did not survive escaping: %q", got)
	}
	if got := switchQuery(t, body).Get("referral"); got != attack {
		t.Errorf("referral did not survive escaping in the switch link: %q", got)
	}
	if !strings.Contains(html.UnescapeString(body), attack) {
		t.Errorf("app name not shown as text")
	}

	token := webpage.NewToken()
	form := validForm("signIn", token)
	form.Set("email", attack)
	form.Set("state", attack)
	body = wantPage(t, post(t, p, form, token), http.StatusUnauthorized)
	if strings.Contains(body, "<script>") || strings.Contains(body, `href="javascript:`) {
		t.Fatalf("hostile form input rendered as markup:\n%s", body)
	}
}

func TestRedirectSource(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://app.example.com/callback?x=1", "https://app.example.com"},
		{"http://127.0.0.1:3000/cb", "http://127.0.0.1:3000"},
		{"http://[::1]:3000/cb", "http://[::1]:3000"},
		{"myapp://callback", ""},
		{"/relative", ""},
		{"https://evil.example;script-src *", ""},
		{"https://a.example%20script-src/cb", ""},
	}
	for _, tt := range tests {
		if got := RedirectSource(tt.in); got != tt.want {
			t.Errorf("RedirectSource(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOtherMethodsAreRefused(t *testing.T) {
	p, _ := newPage(newFake())
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPut, Path, nil))
	wantPage(t, rec, http.StatusMethodNotAllowed)
	if rec.Header().Get("Allow") != "GET, POST" {
		t.Errorf("Allow = %q", rec.Header().Get("Allow"))
	}
}

// wire is what the page receives for err from identity: the status the server chain maps it to.
func wire(err error) error { return grpcx.StatusOf(err).Err() }

func TestLimitsAndOutagesTellTheBrowserWhenToRetry(t *testing.T) {
	tests := []struct {
		name       string
		describe   bool // fail the link check instead of the submission
		err        error
		status     int
		message    string
		retryAfter string
	}{
		{"attempt limit with its window", false, wire(fault.Exhausted(15*time.Minute, "too many failed sign-in attempts")), http.StatusTooManyRequests, msgTooMany, "900"},
		{"attempt limit without a hint", false, status.Error(codes.ResourceExhausted, "limit"), http.StatusTooManyRequests, msgTooMany, ""},
		{"sign-in while identity is unavailable", false, wire(fault.Unavailable(1500*time.Millisecond, "busy")), http.StatusServiceUnavailable, msgUnavailable, "2"},
		{"link check while identity is unavailable", true, wire(fault.Unavailable(30*time.Second, "busy")), http.StatusServiceUnavailable, msgUnavailable, "30"},
		{"link check while identity is unreachable", true, status.Error(codes.Unavailable, "connection refused"), http.StatusServiceUnavailable, msgUnavailable, ""},
		{"other failures send no Retry-After", false, wire(fault.Unauthenticated("no")), http.StatusUnauthorized, msgBadCredentials, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			var rec *httptest.ResponseRecorder
			p, _ := newPage(fake)
			if tt.describe {
				fake.describeErr = tt.err
				rec = get(t, p, linkQuery("signIn"))
			} else {
				fake.submitErr = tt.err
				token := webpage.NewToken()
				rec = post(t, p, validForm("signIn", token), token)
			}
			body := wantPage(t, rec, tt.status)
			if !strings.Contains(body, html.EscapeString(english(tt.message))) {
				t.Errorf("page lacks %q", tt.message)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
		})
	}
}

var recoverLink = regexp.MustCompile(`<p class="switch recover"><a href="([^"]*)">Forgot your password\?</a>`)

func TestTheSignInFormLinksToThePasswordResetWithTheRequestAndTheSignUpFormDoesNot(t *testing.T) {
	p, _ := newPage(newFake())
	m := recoverLink.FindStringSubmatch(get(t, p, linkQuery("signIn")).Body.String())
	if m == nil {
		t.Fatal("the sign-in form has no \"Forgot your password?\" link")
	}
	u, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil || u.Path != RecoverPath {
		t.Fatalf("link %q (%v)", m[1], err)
	}
	want := linkQuery("signIn")
	want.Del("type")
	want.Del("referral") // a referral is for sign-up only
	if u.Query().Encode() != want.Encode() {
		t.Errorf("link query = %v, want %v", u.Query(), want)
	}
	if recoverLink.MatchString(get(t, p, linkQuery(signUpType)).Body.String()) {
		t.Error("the sign-up form links to the password reset")
	}
}
