package account

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// request builds a request to the page from peer 203.0.113.9 carrying cookies.
func request(t *testing.T, method, target, body string, cookies ...*http.Cookie) *http.Request {
	t.Helper()
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-account"), method, target, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.RemoteAddr = "203.0.113.9:51234"
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

func serve(p *Page, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

// cookie is the cookie name rec sets, or nil.
func cookie(rec *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// wire is err as it arrives over gRPC.
func wire(err error) error { return grpcx.StatusOf(err).Err() }

var signedIn = &http.Cookie{Name: tokenCookie, Value: accessToken(sessionID)}

func TestWithoutItsCookieThePageSignsInThroughTheLoginPageToItsCallback(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID+"&language=de", ""))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("GET /account = %d:\n%s", rec.Code, rec.Body)
	}
	to, err := url.Parse(rec.Header().Get("Location"))
	if err != nil || to.Path != "/login" {
		t.Fatalf("Location = %q", rec.Header().Get("Location"))
	}
	q := to.Query()
	if q.Get("client_id") != appID || q.Get("redirect_uri") != callback || q.Get("type") != "signIn" || q.Get("language") != "de" ||
		!webpage.WellFormedToken(q.Get("state")) || !webpage.WellFormedToken(q.Get("nonce")) {
		t.Errorf("sign-in link = %v", q)
	}
	c := cookie(rec, flowCookie)
	if c == nil || !c.HttpOnly || !c.Secure || c.Path != Path || c.SameSite != http.SameSiteStrictMode || c.MaxAge != flowMaxAge ||
		!strings.HasPrefix(c.Value, q.Get("state")+"."+q.Get("nonce")+".") {
		t.Errorf("flow cookie = %+v", c)
	}
	if len(fake.received("GetMe")) != 0 {
		t.Error("the page read a user without a sign-in")
	}
}

func TestTheCallbackRefusesAStateThisBrowserDidNotStart(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	flow := &http.Cookie{Name: flowCookie, Value: webpage.NewToken() + "." + webpage.NewToken() + "." + appID + "."}
	for name, req := range map[string]*http.Request{
		"no flow cookie": request(t, http.MethodGet, CallbackPath+"?code=c&state="+webpage.NewToken(), ""),
		"another state":  request(t, http.MethodGet, CallbackPath+"?code=c&state="+webpage.NewToken(), "", flow),
		"no code":        request(t, http.MethodGet, CallbackPath+"?state="+strings.Split(flow.Value, ".")[0], "", flow),
	} {
		rec := serve(p, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "sign-in did not complete") {
			t.Errorf("%s: %d\n%s", name, rec.Code, rec.Body)
		}
	}
	if n := len(fake.received("ExchangeToken")); n != 0 {
		t.Errorf("%d codes exchanged for a foreign state", n)
	}
}

func TestTheCallbackKeepsOnlyTheAccessTokenInAStrictCookieAndEndsThePagesOwnSession(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	state, nonce := webpage.NewToken(), webpage.NewToken()
	flow := &http.Cookie{Name: flowCookie, Value: state + "." + nonce + "." + appID + ".de"}
	rec := serve(p, request(t, http.MethodGet, CallbackPath+"?code=c0de&state="+state+"&client_id="+appID, "", flow))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path+"?client_id="+appID+"&language=de" {
		t.Fatalf("callback = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	ex := fake.received("ExchangeToken")
	if len(ex) != 1 {
		t.Fatalf("exchanges = %v", ex)
	}
	if r := ex[0].req.(*identityv1.ExchangeTokenRequest); r.GetRedirectUri() != callback || r.GetCode() != "c0de" || r.GetNonce() != nonce || r.GetClientId() != appID {
		t.Errorf("exchange = %v", r)
	}
	revoked := fake.received("RevokeSession")
	if len(revoked) != 1 || revoked[0].req.(*identityv1.RevokeSessionRequest).GetSessionId() != sessionID ||
		revoked[0].bearer != "Bearer "+accessToken(sessionID) {
		t.Errorf("the page's own session was not ended with its token: %v", revoked)
	}
	c := cookie(rec, tokenCookie)
	if c == nil || c.Value != accessToken(sessionID) || !c.HttpOnly || !c.Secure || c.Path != Path ||
		c.SameSite != http.SameSiteStrictMode || c.MaxAge != 15*60 {
		t.Errorf("token cookie = %+v", c)
	}
	for _, c := range rec.Result().Cookies() {
		if strings.Contains(c.Value, "refresh") {
			t.Errorf("cookie %s holds the refresh token", c.Name)
		}
	}
	if f := cookie(rec, flowCookie); f == nil || f.MaxAge >= 0 {
		t.Errorf("the flow cookie was not deleted: %+v", f)
	}
}

func TestThePageShowsTheEmailItsVerificationAndTheSessions(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET = %d:\n%s", rec.Code, body)
	}
	for _, want := range []string{userEmail + " (not verified yet)", "Firefox on the phone", "198.51.100.4", "2026-11-20 08:30 UTC",
		`value="` + otherID + `"`, `minlength="8"`, "8 to 128 characters", `name="csrf_token"`, "End all other sessions"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	for _, c := range fake.received("ListSessions") {
		if c.bearer != "Bearer "+accessToken(sessionID) || c.req.(*identityv1.ListSessionsRequest).GetUserId() != "me" {
			t.Errorf("sessions listed as %v", c)
		}
	}
	if got := rec.Header().Get("Content-Security-Policy"); !strings.Contains(got, "form-action 'self'") || !strings.Contains(got, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", got)
	}
}

func TestThePageSpeaksGermanWithLanguageDe(t *testing.T) {
	fake := newFake()
	fake.verified = true
	p, _ := newPage(fake)
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID+"&language=de", "", signedIn))
	body := rec.Body.String()
	for _, want := range []string{`<html lang="de">`, "Dein Konto", userEmail + " (bestätigt)", "Passwort ändern", `name="language" value="de"`} {
		if !strings.Contains(body, want) {
			t.Errorf("German page lacks %q:\n%s", want, body)
		}
	}
}

// An expired or revoked-user token signs in again instead of showing an error.
func TestAnExpiredTokenCookieStartsANewSignIn(t *testing.T) {
	fake := newFake()
	fake.errs["GetMe"] = wire(fault.Unauthenticated("invalid access token"))
	p, _ := newPage(fake)
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn))
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login?") {
		t.Fatalf("GET with an expired token = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if c := cookie(rec, tokenCookie); c == nil || c.MaxAge >= 0 {
		t.Errorf("the stale token cookie was kept: %+v", c)
	}
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrfPair renders the page once and returns its CSRF pair.
func csrfPair(t *testing.T, p *Page) (*http.Cookie, string) {
	t.Helper()
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn))
	m := csrfInput.FindStringSubmatch(rec.Body.String())
	c := cookie(rec, csrf.Cookie)
	if m == nil || c == nil {
		t.Fatalf("no CSRF pair on the page:\n%s", rec.Body)
	}
	return c, m[1]
}

func form(token string, kv ...string) string {
	v := url.Values{"client_id": {appID}, webpage.CSRFField: {token}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

func TestChangingThePasswordPostsTheTokenAndAddressThenReturnsWithANotice(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "password", "current_password", "old secret", "new_password", "a new secret"), c, signedIn))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path+"?client_id="+appID+"&notice=password" {
		t.Fatalf("POST password = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	got := fake.received("ChangePassword")
	if len(got) != 1 {
		t.Fatalf("changes = %v", got)
	}
	if r := got[0].req.(*identityv1.ChangePasswordRequest); r.GetAccessToken() != accessToken(sessionID) || r.GetCurrentPassword() != "old secret" ||
		r.GetNewPassword() != "a new secret" || r.GetClientIp() != "203.0.113.9" {
		t.Errorf("change = %v", r)
	}
	back := serve(p, request(t, http.MethodGet, rec.Header().Get("Location"), "", signedIn))
	if !strings.Contains(back.Body.String(), "Your password was changed") {
		t.Errorf("the page after the change lacks its notice:\n%s", back.Body)
	}
}

func TestARefusedPasswordChangeSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		want   string
	}{
		{"wrong current", wire(fault.Invalid("current_password", "wrong")), http.StatusBadRequest, "The current password is not correct."},
		{"common", wire(fault.Invalid("password", "too common").WithReason("common")), http.StatusBadRequest, "This password is too common"},
		{"too many", status.Error(codes.ResourceExhausted, "slow down"), http.StatusTooManyRequests, "Too many attempts"},
		{"backend down", status.Error(codes.Unavailable, "down"), http.StatusServiceUnavailable, "temporarily unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.errs["ChangePassword"] = tc.err
			p, logs := newPage(fake)
			c, token := csrfPair(t, p)
			rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "password", "current_password", "old secret", "new_password", "password"), c, signedIn))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("= %d, want %d with %q:\n%s", rec.Code, tc.status, tc.want, rec.Body)
			}
			if strings.Contains(logs.String(), "old secret") || strings.Contains(rec.Body.String(), "old secret") {
				t.Error("the current password reached the log or the page")
			}
		})
	}
}

func TestEveryActionNeedsTheCSRFToken(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, _ := csrfPair(t, p)
	for _, action := range []string{"password", "end", "endAll", "signOut", "resend"} {
		rec := serve(p, request(t, http.MethodPost, Path, form(webpage.NewToken(), "action", action, "session_id", otherID, "current_password", "a", "new_password", "b"), c, signedIn))
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s with a wrong CSRF token = %d", action, rec.Code)
		}
	}
	for _, m := range []string{"ChangePassword", "RevokeSession", "RevokeSessions", "ResendVerification"} {
		if n := len(fake.received(m)); n != 0 {
			t.Errorf("%s called %d times without a CSRF token", m, n)
		}
	}
}

func TestEndingSessionsUsesTheUsersOwnToken(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "end", "session_id", otherID), c, signedIn))
	if rec.Code != http.StatusSeeOther || !strings.HasSuffix(rec.Header().Get("Location"), "notice=ended") {
		t.Fatalf("end = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "endAll"), c, signedIn))
	if rec.Code != http.StatusSeeOther || !strings.HasSuffix(rec.Header().Get("Location"), "notice=endedAll") {
		t.Fatalf("end all = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	one, all := fake.received("RevokeSession"), fake.received("RevokeSessions")
	if len(one) != 1 || one[0].req.(*identityv1.RevokeSessionRequest).GetSessionId() != otherID || one[0].bearer != "Bearer "+accessToken(sessionID) ||
		len(all) != 1 || all[0].req.(*identityv1.RevokeSessionsRequest).GetUserId() != "me" || all[0].bearer != "Bearer "+accessToken(sessionID) {
		t.Errorf("revocations = %v / %v", one, all)
	}
	fake.errs["RevokeSession"] = wire(fault.NotFound("session"))
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "end", "session_id", otherID), c, signedIn))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "already ended") {
		t.Errorf("ending an ended session = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestSignOutClearsTheTokenCookie(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "signOut"), c, signedIn))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "You are signed out") {
		t.Fatalf("sign out = %d:\n%s", rec.Code, rec.Body)
	}
	if k := cookie(rec, tokenCookie); k == nil || k.MaxAge >= 0 || k.Value != "" {
		t.Errorf("token cookie after sign-out = %+v", k)
	}
}

func TestBadInputAnswersThePagesErrorCard(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	for name, req := range map[string]*http.Request{
		"no client_id":         request(t, http.MethodGet, Path, ""),
		"client_id not UTF-8":  request(t, http.MethodGet, Path+"?client_id=%ff", ""),
		"control character":    request(t, http.MethodGet, Path+"?client_id=a%1bb", ""),
		"unknown action":       request(t, http.MethodPost, Path, form(token, "action", "delete"), c, signedIn),
		"malformed session id": request(t, http.MethodPost, Path, form(token, "action", "end", "session_id", "x"), c, signedIn),
		"password with NUL":    request(t, http.MethodPost, Path, form(token, "action", "password", "current_password", "a\x00", "new_password", "b"), c, signedIn),
		"PUT":                  request(t, http.MethodPut, Path, ""),
	} {
		rec := serve(p, req)
		if rec.Code < 400 || rec.Code >= 500 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s = %d %q", name, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	if n := len(fake.received("ChangePassword")) + len(fake.received("RevokeSession")); n != 0 {
		t.Errorf("bad input reached identity %d times", n)
	}
}

func TestTheResendButtonShowsOnlyWhileTheAddressIsUnverified(t *testing.T) {
	for _, verified := range []bool{false, true} {
		fake := newFake()
		fake.verified = verified
		p, _ := newPage(fake)
		body := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn)).Body.String()
		if shown := strings.Contains(body, `id="resend-verification"`); shown == verified {
			t.Errorf("verified %v: resend button shown %v:\n%s", verified, shown, body)
		}
	}
}

func TestResendingMailsTheSignedInUsersAddressThroughIdentityThenReturnsWithANotice(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	// A form's email field is ignored: the address is the token's user's.
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "resend", "email", "someone@else.example"), c, signedIn))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path+"?client_id="+appID+"&notice=resent" {
		t.Fatalf("POST resend = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	got := fake.received("ResendVerification")
	if len(got) != 1 {
		t.Fatalf("resends = %v", got)
	}
	r := got[0].req.(*identityv1.ResendVerificationRequest)
	if r.GetEmail() != userEmail || r.GetClientIp() != "203.0.113.9" || r.GetParams().GetClientId() != appID || r.GetParams().GetRedirectUri() != callback || r.GetParams().GetState() != "" {
		t.Errorf("resend = %v", r)
	}
	back := serve(p, request(t, http.MethodGet, rec.Header().Get("Location"), "", signedIn))
	if !strings.Contains(back.Body.String(), "A new verification mail is on its way") {
		t.Errorf("the page after the resend lacks its notice:\n%s", back.Body)
	}
}

func TestAResendOfAVerifiedAddressMailsNothing(t *testing.T) {
	fake := newFake()
	fake.verified = true
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "resend"), c, signedIn))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path+"?client_id="+appID {
		t.Fatalf("POST resend of a verified address = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if n := len(fake.received("ResendVerification")); n != 0 {
		t.Errorf("%d resends for a verified address", n)
	}
}

func TestALimitedResendSaysSoInTheLanguageOfThePage(t *testing.T) {
	for lang, want := range map[string]string{
		"en": "Too many verification mails were sent.",
		"de": "Es wurden zu viele Bestätigungs-E-Mails gesendet.",
	} {
		t.Run(lang, func(t *testing.T) {
			fake := newFake()
			fake.errs["ResendVerification"] = wire(fault.Exhausted(10*time.Minute, "too many verification mails"))
			p, _ := newPage(fake)
			c, token := csrfPair(t, p)
			rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "resend", "language", lang), c, signedIn))
			if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), want) || rec.Header().Get("Retry-After") != "600" {
				t.Errorf("limited resend = %d (Retry-After %q), want 429 with %q:\n%s", rec.Code, rec.Header().Get("Retry-After"), want, rec.Body)
			}
		})
	}
}

func TestAResendWithAnotherAppsTokenIsSignedOut(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	body := url.Values{"client_id": {"9a8b7c6d-1111-4222-8333-944445555666"}, webpage.CSRFField: {token}, "action": {"resend"}}.Encode()
	rec := serve(p, request(t, http.MethodPost, Path, body, c, signedIn))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("resend for another app = %d:\n%s", rec.Code, rec.Body)
	}
	if n := len(fake.received("ResendVerification")); n != 0 {
		t.Errorf("%d resends with another app's token", n)
	}
}
