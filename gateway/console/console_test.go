package console

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

	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestTheTemplatesUseOnlyMessagesOfTheCatalog(t *testing.T) {
	for _, tmpl := range pages.Templates() {
		if unknown := locale.UnknownKeys(tmpl.Tree); len(unknown) > 0 {
			t.Errorf("template %q uses keys the catalog lacks: %q", tmpl.Name(), unknown)
		}
	}
	for _, key := range notices {
		if !locale.Has(key) {
			t.Errorf("notice %q is not in the catalog", key)
		}
	}
	for _, p := range []string{"required", "optional", "off"} {
		if !locale.Has("console.policy." + p) {
			t.Errorf("policy %q has no text", p)
		}
	}
}

func TestSigningInSetsASealedStrictCookieHoldingTheOperatorToken(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	k := b.cookies[SessionCookie]
	if k == nil {
		t.Fatal("no session cookie")
	}
	if !k.HttpOnly || k.SameSite != http.SameSiteStrictMode || k.Path != Path || !k.Secure {
		t.Errorf("cookie attributes: HttpOnly %v SameSite %v Path %q Secure %v", k.HttpOnly, k.SameSite, k.Path, k.Secure)
	}
	if strings.Contains(k.Value, "operator-token") {
		t.Error("the cookie shows the operator token in the clear")
	}
	if k.MaxAge != int(AbsoluteTimeout.Seconds()) {
		t.Errorf("Max-Age = %d, want the absolute limit %v", k.MaxAge, AbsoluteTimeout)
	}
	in := f.received("SignInMember")
	if len(in) != 1 || in[0].bearer != "" || in[0].req.(*identityv1.SignInMemberRequest).GetClientAddress() != "192.0.2.1" {
		t.Errorf("SignInMember calls = %+v, want one with the browser's address and no bearer", in)
	}
	rec := b.get(Path)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Demo &lt;App&gt;") {
		t.Fatalf("home = %d:\n%s", rec.Code, rec.Body)
	}
	for _, call := range f.received("ListProjectApps") {
		if call.bearer != "Bearer operator-token-1" || call.req.(*identityv1.ListProjectAppsRequest).GetProjectId() != projectID {
			t.Errorf("ListProjectApps = %+v, want the member's token and project", call)
		}
	}
}

// A local run over plain HTTP on a loopback address gets its cookie back only without Secure;
// anything else (a deployment behind a TLS proxy included) keeps it.
func TestTheSessionCookieIsSecureExceptOverPlainHTTPOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		host   string
		secure bool
	}{
		{"127.0.0.1:8080", false}, {"localhost:8080", false}, {"[::1]:8080", false},
		{"console.example", true}, {"192.0.2.7:8080", true},
	} {
		c, _ := newConsole(t, newFake())
		b := newBrowser(t, c)
		b.host = tc.host
		b.signIn()
		if got := b.cookies[SessionCookie].Secure; got != tc.secure {
			t.Errorf("host %s: Secure = %v, want %v", tc.host, got, tc.secure)
		}
	}
}

func TestTheSessionEndsAfterItsIdleOrAbsoluteLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []time.Duration // the pauses before each request after the sign-in
		ended bool
	}{
		{"used within the idle limit", []time.Duration{29 * time.Minute}, false},
		{"left alone longer than the idle limit", []time.Duration{31 * time.Minute}, true},
		{"each request restarts the idle clock", []time.Duration{20 * time.Minute, 20 * time.Minute, 20 * time.Minute}, false},
		{"used all day, past the absolute limit", repeat(25*time.Minute, 29), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			c, now := newConsole(t, f)
			b := newBrowser(t, c)
			b.signIn()
			var rec *httptest.ResponseRecorder
			for _, d := range tc.steps {
				*now = now.Add(d)
				rec = b.get(Path)
			}
			ended := rec.Code == http.StatusSeeOther && rec.Header().Get("Location") == SignInPath+"?notice=ended"
			if ended != tc.ended {
				t.Fatalf("after %v: %d %q, want ended %v", tc.steps, rec.Code, rec.Header().Get("Location"), tc.ended)
			}
			if ended && b.cookies[SessionCookie] != nil {
				t.Error("the ended session's cookie was not cleared")
			}
		})
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestACookieThatDoesNotOpenIsNoSession(t *testing.T) {
	for name, value := range map[string]string{
		"garbage":        "not-a-sealed-value",
		"other key":      sealedWith(t, []byte("fedcba9876543210fedcba9876543210")),
		"truncated seal": "AAAA",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			c, _ := newConsole(t, f)
			b := newBrowser(t, c)
			b.cookies[SessionCookie] = &http.Cookie{Name: SessionCookie, Value: value}
			rec := b.get(Path)
			if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), SignInPath) {
				t.Errorf("GET %s = %d %q, want the sign-in page", Path, rec.Code, rec.Header().Get("Location"))
			}
			if n := len(f.received("DescribeMember")); n != 0 {
				t.Errorf("%d backend calls with a forged session", n)
			}
		})
	}
}

// sealedWith is a session sealed under another key, as another deployment would make.
func sealedWith(t *testing.T, key []byte) string {
	other, _ := newConsole(t, newFake())
	c, err := New(other.Backends, key, other.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.sessions.now = other.sessions.now
	b := newBrowser(t, c)
	b.signIn()
	return b.cookies[SessionCookie].Value
}

func TestAFormWithoutItsCSRFTokenChangesNothing(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	for _, token := range []string{"", "forged-token-of-the-right-length-000000000000"} {
		form := url.Values{"action": {"revoke"}, "key": {keyID}, "confirm": {"yes"}, "csrf_token": {token}}
		rec := b.do(http.MethodPost, KeysURL(testApp), form)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "The form expired") {
			t.Errorf("token %q: %d:\n%s", token, rec.Code, rec.Body)
		}
	}
	if n := len(f.received("RevokeApiKey")); n != 0 {
		t.Errorf("%d revocations without a CSRF token", n)
	}
}

func KeysURL(app string) string { return frame{}.KeysURL(app) }

func TestEveryPageAnswersUnderTheStrictPolicyWithoutInlineStyleOrScript(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	inline := regexp.MustCompile(`<style|<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=`)
	for _, path := range []string{SignInPath, Path, SecurityPath, MembersPath, frame{}.AppURL(testApp), KeysURL(testApp), InvitationPath + "?token=t",
		frame{}.EventsURL(testApp), frame{}.EndpointURL(testApp, endpointID)} {
		rec := b.get(path)
		if path == SignInPath {
			rec = newBrowser(t, c).get(path)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'" {
			t.Errorf("%s: CSP %q", path, csp)
		}
		for _, h := range []string{"X-Frame-Options", "Referrer-Policy", "X-Content-Type-Options", "Cache-Control"} {
			if rec.Header().Get(h) == "" {
				t.Errorf("%s lacks %s", path, h)
			}
		}
		if rec.Code != http.StatusOK || inline.MatchString(rec.Body.String()) {
			t.Errorf("%s = %d, inline style or script: %q", path, rec.Code, inline.FindString(rec.Body.String()))
		}
		if !strings.Contains(rec.Body.String(), `<link rel="stylesheet" href="/console/static/console.css">`) {
			t.Errorf("%s does not link the stylesheet", path)
		}
	}
	css := b.get(StylePath)
	if css.Code != http.StatusOK || !strings.HasPrefix(css.Header().Get("Content-Type"), "text/css") || !strings.Contains(css.Body.String(), "--accent") {
		t.Errorf("stylesheet = %d %q", css.Code, css.Header().Get("Content-Type"))
	}
}

func TestASecondFactorStepFollowsThePasswordWhenIdentityAsksForIt(t *testing.T) {
	f := newFake()
	f.secondFactor = true
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	rec := b.post(SignInPath, url.Values{"email": {memberEmail}, "password": {memberPass}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `name="challenge" value="`+challenge+`"`) || b.cookies[SessionCookie] != nil {
		t.Fatalf("sign in = %d (session %v):\n%s", rec.Code, b.cookies[SessionCookie] != nil, rec.Body)
	}
	f.errs["VerifyMemberSecondFactor"] = status.Error(codes.InvalidArgument, "wrong code")
	rec = b.post(SecondFactorPath, url.Values{"challenge": {challenge}, "code": {"000000"}})
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "The code is not correct") || b.cookies[SessionCookie] != nil {
		t.Fatalf("wrong code = %d:\n%s", rec.Code, rec.Body)
	}
	delete(f.errs, "VerifyMemberSecondFactor")
	rec = b.post(SecondFactorPath, url.Values{"challenge": {challenge}, "code": {goodCode}})
	if rec.Code != http.StatusSeeOther || b.cookies[SessionCookie] == nil {
		t.Fatalf("right code = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestAWrongPasswordAndAnUnknownAddressGetTheSameAnswer(t *testing.T) {
	for _, code := range []codes.Code{codes.Unauthenticated, codes.NotFound, codes.InvalidArgument} {
		f := newFake()
		f.errs["SignInMember"] = status.Error(code, "no")
		c, _ := newConsole(t, f)
		b := newBrowser(t, c)
		rec := b.post(SignInPath, url.Values{"email": {memberEmail}, "password": {"wrong password"}})
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "The email address or password is not correct.") {
			t.Errorf("%v: %d:\n%s", code, rec.Code, rec.Body)
		}
	}
	f := newFake()
	f.errs["SignInMember"] = status.Error(codes.ResourceExhausted, "limit")
	c, _ := newConsole(t, f)
	rec := newBrowser(t, c).post(SignInPath, url.Values{"email": {memberEmail}, "password": {"x"}})
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "Too many attempts") {
		t.Errorf("limited: %d:\n%s", rec.Code, rec.Body)
	}
}

func TestRefusedCallsBecomeMessagesOnThePage(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		text   string
	}{
		{status.Error(codes.PermissionDenied, "not a member"), http.StatusForbidden, "You are not allowed to do this in this project."},
		{status.Error(codes.NotFound, "no app"), http.StatusNotFound, "belongs to another project"},
		{status.Error(codes.Unavailable, "down"), http.StatusServiceUnavailable, "temporarily unavailable"},
		{status.Error(codes.Internal, "bug"), http.StatusInternalServerError, "Something went wrong on our side"},
	} {
		f := newFake()
		c, _ := newConsole(t, f)
		b := newBrowser(t, c)
		b.signIn()
		f.errs["GetApp"] = tc.err
		rec := b.get(frame{}.AppURL(testApp))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.text) || !strings.Contains(rec.Body.String(), `id="sign-out"`) {
			t.Errorf("%v: %d, want %d with %q and the navigation:\n%s", tc.err, rec.Code, tc.status, tc.text, rec.Body)
		}
	}
}

// A token identity no longer accepts (revoked, expired, the member removed) signs in again.
func TestATokenIdentityRefusesSendsTheBrowserToTheSignIn(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	f.errs["DescribeMember"] = status.Error(codes.Unauthenticated, "revoked")
	rec := b.get(Path)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SignInPath+"?notice=ended" || b.cookies[SessionCookie] != nil {
		t.Errorf("= %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestSigningOutEndsTheTokensSessionAndClearsTheCookie(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.post(SignOutPath, url.Values{})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SignInPath+"?notice=signedOut" || b.cookies[SessionCookie] != nil {
		t.Errorf("sign out = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if out := f.received("SignOutMember"); len(out) != 1 || out[0].bearer != "Bearer operator-token-1" {
		t.Errorf("SignOutMember = %+v", out)
	}
	if rec := b.get(Path); rec.Code != http.StatusSeeOther {
		t.Errorf("home after sign-out = %d", rec.Code)
	}
}

func TestACreatedKeysSecretIsShownOnceWithACopyButton(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.post(KeysURL(testApp), url.Values{"action": {"create"}, "type": {"write"}, "name": {"backend"}, "description": {"the shop's server"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<code id="new-secret">sk_secret_shown_once</code>`) ||
		!strings.Contains(rec.Body.String(), `data-copy="new-secret"`) {
		t.Fatalf("create = %d:\n%s", rec.Code, rec.Body)
	}
	in := f.received("CreateApiKey")[0]
	if req := in.req.(*identityv1.CreateApiKeyRequest); in.bearer != "Bearer operator-token-1" || req.GetAppId() != testApp || req.GetType() != "write" || req.GetDescription() != "the shop's server" {
		t.Errorf("CreateApiKey = %+v", in)
	}
	if again := b.get(KeysURL(testApp)); strings.Contains(again.Body.String(), "sk_secret_shown_once") {
		t.Error("the secret is shown again")
	}
}

func TestRenamingAKeyUsesRouteTwosChangeInTheMembersProject(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.post(KeysURL(testApp), url.Values{"action": {"rename"}, "key": {keyID}, "name": {"renamed"}, "description": {""}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != KeysURL(testApp)+"?notice=renamed" {
		t.Fatalf("rename = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	req := f.received("UpdateApiKey")[0].req.(*identityv1.UpdateApiKeyRequest)
	if req.GetProjectUuid() != projectID || req.GetAppUuid() != testApp || req.GetApiKeyUuid() != keyID || req.GetName() != "renamed" {
		t.Errorf("UpdateApiKey = %v", req)
	}
}

func TestDestructiveActionsNeedTheirConfirmation(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	for _, tc := range []struct {
		target string
		form   url.Values
		method string
	}{
		{KeysURL(testApp), url.Values{"action": {"revoke"}, "key": {keyID}}, "RevokeApiKey"},
		{frame{}.AppURL(testApp), url.Values{"action": {"rotate"}}, "RotateAppKey"},
	} {
		rec := b.post(tc.target, tc.form)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "(confirm)") || len(f.received(tc.method)) != 0 {
			t.Errorf("%s without confirm = %d:\n%s", tc.method, rec.Code, rec.Body)
		}
		tc.form.Set("confirm", "yes")
		if rec := b.post(tc.target, tc.form); rec.Code != http.StatusSeeOther || len(f.received(tc.method)) != 1 {
			t.Errorf("%s confirmed = %d:\n%s", tc.method, rec.Code, rec.Body)
		}
	}
}

func TestTheAppPageShowsSettingsButNeverAProvidersSecret(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.get(frame{}.AppURL(testApp))
	body := rec.Body.String()
	for _, want := range []string{"https://app.example", "Provider A", "stored (never shown)", `id="rotate-warning"`, "ends every user&#39;s session"} {
		if !strings.Contains(body, want) {
			t.Errorf("the app page lacks %q", want)
		}
	}
	if rec := b.post(frame{}.AppURL(testApp), url.Values{"action": {"mfa"}, "policy": {"required"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("mfa = %d:\n%s", rec.Code, rec.Body)
	}
	if req := f.received("SetAppMfa")[0].req.(*identityv1.SetAppMfaRequest); req.GetPolicy() != "required" || req.GetAppId() != testApp {
		t.Errorf("SetAppMfa = %v", req)
	}
}

func TestAnInvitationIsAcceptedWithANameAndPasswordAndSignsIn(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	rec := b.get(InvitationPath + "?token=invite-token")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "new@example.com") || !strings.Contains(rec.Body.String(), `id="name"`) {
		t.Fatalf("invitation = %d:\n%s", rec.Code, rec.Body)
	}
	rec = b.post(InvitationPath, url.Values{"token": {"invite-token"}, "name": {"New Member"}, "password": {memberPass}})
	if rec.Code != http.StatusSeeOther || b.cookies[SessionCookie] == nil {
		t.Fatalf("accept = %d:\n%s", rec.Code, rec.Body)
	}
	if req := f.received("AcceptInvitation")[0].req.(*identityv1.AcceptInvitationRequest); req.GetName() != "New Member" || req.GetClientAddress() == "" {
		t.Errorf("AcceptInvitation = %v", req)
	}
	f.errs["DescribeInvitation"] = status.Error(codes.NotFound, "used")
	if rec := newBrowser(t, c).get(InvitationPath + "?token=used"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "cannot be used") {
		t.Errorf("used invitation = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestSwitchingProjectsKeepsTheSignInsAbsoluteLimit(t *testing.T) {
	f := newFake()
	c, now := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	for range 26 { // 10 h 50 min of use, never idle for long
		*now = now.Add(25 * time.Minute)
		b.get(Path)
	}
	rec := b.post(SwitchPath, url.Values{"project": {otherProj}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("switch = %d:\n%s", rec.Code, rec.Body)
	}
	if k := b.cookies[SessionCookie]; k.MaxAge != int((70 * time.Minute).Seconds()) {
		t.Errorf("the switched session's Max-Age = %d, want the 70 minutes left of the sign-in's 12 hours", k.MaxAge)
	}
	if in := f.received("SwitchProject"); in[0].req.(*identityv1.SwitchProjectRequest).GetProjectId() != otherProj {
		t.Errorf("SwitchProject = %v", in)
	}
	apps := f.received("ListProjectApps")
	if rec := b.get(Path); rec.Code != http.StatusOK || f.received("ListProjectApps")[len(apps)].bearer != "Bearer operator-token-2" {
		t.Errorf("home after switch = %d with %+v", rec.Code, f.received("ListProjectApps"))
	}
}

func TestTheLanguageLinkSwitchesEveryFollowingPageToGerman(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	if rec := b.get(Path + "?language=de"); !strings.Contains(rec.Body.String(), `<html lang="de">`) || !strings.Contains(rec.Body.String(), "Deine Apps") {
		t.Fatalf("German home:\n%s", rec.Body)
	}
	if rec := b.get(MembersPath); !strings.Contains(rec.Body.String(), "Projektmitglieder") {
		t.Errorf("the next page forgot the language:\n%s", rec.Body)
	}
}

func TestTOTPEnrolmentShowsTheKeyThenTheRecoveryCodesOnce(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.post(SecurityPath, url.Values{"action": {"start"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "JBSWY3DPEHPK3PXP") || !strings.Contains(rec.Body.String(), "<svg") {
		t.Fatalf("start = %d:\n%s", rec.Code, rec.Body)
	}
	rec = b.post(SecurityPath, url.Values{"action": {"confirm"}, "code": {goodCode}, "current_password": {memberPass}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "aaaa-bbbb") {
		t.Fatalf("confirm = %d:\n%s", rec.Code, rec.Body)
	}
	if req := f.received("ConfirmMemberTotp")[0].req.(*identityv1.ConfirmMemberTotpRequest); req.GetCode() != goodCode || req.GetCurrentPassword() != memberPass {
		t.Errorf("ConfirmMemberTotp = %v", req)
	}
}

func TestInvitingAMemberSendsTheProjectAndLanguage(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.post(MembersPath, url.Values{"email": {"colleague@example.com"}, "name": {"Col"}, "language": {"de"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != MembersPath+"?notice=invited" {
		t.Fatalf("invite = %d:\n%s", rec.Code, rec.Body)
	}
	if req := f.received("InviteMember")[0].req.(*identityv1.InviteMemberRequest); req.GetProjectId() != projectID || req.GetLanguage() != "de" {
		t.Errorf("InviteMember = %v", req)
	}
}

// The language links show the same page again: an invitation keeps its token, and the answer to a
// form (which has no page of its own to show again) links to the home page.
func TestTheLanguageLinksKeepThePageTheyAreOn(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	if rec := b.get(InvitationPath + "?token=invite-token&notice=saved"); !strings.Contains(rec.Body.String(), `href="/console/invitation?language=de&amp;token=invite-token"`) {
		t.Errorf("the invitation's German link lost its token:\n%s", rec.Body)
	}
	b.signIn()
	f.errs["SwitchProject"] = status.Error(codes.PermissionDenied, "no")
	if rec := b.post(SwitchPath, url.Values{"project": {otherProj}}); !strings.Contains(rec.Body.String(), `href="/console?language=de"`) {
		t.Errorf("the refused switch's German link:\n%s", rec.Body)
	}
}
