package login

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
)

// tok is a well-formed CSRF token the tests send as cookie and field alike.
var tok = webpage.NewToken()

// secondStepForm is the second step's form as the page renders it, with a code typed.
func secondStepForm(flow, code string, extra ...string) url.Values {
	v := url.Values{"client_id": {appID}, "redirect_uri": {redirectURI}, "state": {"st4te"}, "flow": {flow}, "code": {code}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v
}

// submitSignIn posts a valid sign-in form.
func submitSignIn(t *testing.T, p *Page) *httptest.ResponseRecorder {
	t.Helper()
	return post(t, p, validForm("signIn", tok), tok)
}

func TestARightPasswordOfAUserWithASecondFactorAsksForTheCode(t *testing.T) {
	fake := newFake()
	fake.secondFactor = "flow-secret"
	p, _ := newPage(fake)
	rec := submitSignIn(t, p)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `action="/login/second-factor"`) || !strings.Contains(body, `value="flow-secret"`) ||
		!strings.Contains(body, "authenticator app, or one of your recovery codes") {
		t.Fatalf("answer to the password = %d:\n%s", rec.Code, body)
	}
	if strings.Contains(body, "<svg") {
		t.Error("a user with a factor is shown an enrolment")
	}
}

func TestTheRightCodeContinuesToTheAppAndAWrongOneAsksAgain(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	rec := postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "123456"), tok)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != fake.redirectURL {
		t.Fatalf("right code = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if got := fake.factors[0]; got.GetFlow() != "flow-secret" || got.GetCode() != "123456" || got.GetClientIp() != "203.0.113.9" {
		t.Errorf("VerifySecondFactor = %v", got)
	}
	fake.factorErr = grpcx.StatusOf(fault.Invalid("code", "wrong")).Err()
	rec = postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "000000"), tok)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "This code is not correct") || !strings.Contains(rec.Body.String(), `value="flow-secret"`) {
		t.Errorf("wrong code = %d:\n%s", rec.Code, rec.Body)
	}
	fake.factorErr = grpcx.StatusOf(fault.Invalid("flow", "expired")).Err()
	rec = postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "111111"), tok)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "This sign-in expired") {
		t.Errorf("spent flow = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestAnEnrolmentAtSignInShowsTheKeyThenTheRecoveryCodesWithTheWayOn(t *testing.T) {
	fake := newFake()
	fake.secondFactor, fake.enrol = "flow-secret", true
	p, _ := newPage(fake)
	rec := submitSignIn(t, p)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "<svg") || !strings.Contains(body, "JBSWY3DPEHPK3PXP") || !strings.Contains(body, `name="enrol" value="1"`) {
		t.Fatalf("enrolment = %d:\n%s", rec.Code, body)
	}
	fake.recovery = []string{"abcde-fghjk", "mnpqr-stuvw"}
	rec = postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "123456", "enrol", "1"), tok)
	body = rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "mnpqr-stuvw") || !strings.Contains(body, `id="continue" href="`+strings.ReplaceAll(fake.redirectURL, "&", "&amp;")+`"`) {
		t.Fatalf("recovery codes = %d:\n%s", rec.Code, body)
	}
}

func TestTheSecondStepRefusesAFormWithoutACSRFTokenOrFlow(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	rec := postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "123456"), "")
	if rec.Code != http.StatusForbidden {
		t.Errorf("without CSRF = %d", rec.Code)
	}
	rec = postTo(t, p, SecondFactorPath, secondStepForm("", "123456"), tok)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("without flow = %d", rec.Code)
	}
	if len(fake.factors) != 0 {
		t.Errorf("identity was asked %d times", len(fake.factors))
	}
}

func TestAUserWithAPasskeyIsOfferedItWithAScriptOnlyThisAnswerMayRun(t *testing.T) {
	fake := newFake()
	fake.secondFactor, fake.passkeyOptions = "flow-secret", `{"challenge":"Y2hhbGxlbmdl","allowCredentials":[]}`
	p, _ := newPage(fake)
	rec := submitSignIn(t, p)
	body := rec.Body.String()
	nonce := regexp.MustCompile(`<script nonce="([^"]+)">`).FindStringSubmatch(body)
	if rec.Code != http.StatusOK || nonce == nil || !strings.Contains(body, `id="passkey-button"`) || !strings.Contains(body, `name="passkey_state" value="sealed-state"`) {
		t.Fatalf("second step with a passkey = %d:\n%s", rec.Code, body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-"+nonce[1]+"'") {
		t.Errorf("CSP %q does not allow the page's script", csp)
	}
	if !strings.Contains(body, `data-options="{&#34;challenge&#34;:&#34;Y2hhbGxlbmdl&#34;`) {
		t.Errorf("the options are not in the form's data attribute:\n%s", body)
	}
	// Without passkeys there is no script and no script-src.
	fake.passkeyOptions = ""
	rec = submitSignIn(t, p)
	if strings.Contains(rec.Body.String(), "<script") || strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src") {
		t.Error("a user without passkeys gets a script")
	}
}

func TestAPasskeyAssertionIsPostedToIdentityAndARefusedOneAsksAgain(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	rec := postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "", "passkey", `{"id":"abc"}`, "passkey_state", "sealed"), tok)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("a passkey = %d:\n%s", rec.Code, rec.Body)
	}
	if got := fake.factors[0]; got.GetPasskey() != `{"id":"abc"}` || got.GetPasskeyState() != "sealed" || got.GetCode() != "" {
		t.Errorf("VerifySecondFactor = %v", got)
	}
	fake.factorErr = grpcx.StatusOf(fault.Invalid("passkey", "bad")).Err()
	rec = postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "", "passkey", `{"id":"abc"}`, "passkey_state", "sealed"), tok)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "This passkey could not be verified") {
		t.Errorf("a refused passkey = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestASignInFormOfAnAppThatAllowsItOffersAPasskeyThatSignsInWithoutThePassword(t *testing.T) {
	fake := newFake()
	fake.signInOptions = `{"challenge":"Y2hhbGxlbmdl"}`
	p, _ := newPage(fake)
	rec := get(t, p, linkQuery("signIn"))
	body := rec.Body.String()
	if !strings.Contains(body, `action="/login/passkey" id="passkey-form"`) || !strings.Contains(body, `value="sign-in-state"`) ||
		!strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'nonce-") {
		t.Fatalf("sign-in form of an app with passkey sign-in:\n%s", body)
	}
	if up := get(t, p, linkQuery("signUp")); strings.Contains(up.Body.String(), "passkey-form") {
		t.Error("the sign-up form offers a passkey sign-in")
	}
	form := url.Values{"client_id": {appID}, "redirect_uri": {redirectURI}, "state": {"st4te"}, "passkey": {`{"id":"k"}`}, "passkey_state": {"sign-in-state"}}
	rec = postTo(t, p, PasskeyPath, form, tok)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != fake.redirectURL {
		t.Fatalf("passkey sign-in = %d:\n%s", rec.Code, rec.Body)
	}
	if got := fake.passkeySignIns[0]; got.GetPasskey() != `{"id":"k"}` || got.GetState() != "sign-in-state" || got.GetParams().GetState() != "st4te" || got.GetClientIp() != "203.0.113.9" {
		t.Errorf("PasskeySignIn = %v", got)
	}
	fake.factorErr = grpcx.StatusOf(fault.Invalid("passkey", "bad")).Err()
	rec = postTo(t, p, PasskeyPath, form, tok)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "This passkey could not be verified") || !strings.Contains(rec.Body.String(), `id="password"`) {
		t.Errorf("a refused passkey = %d:\n%s", rec.Code, rec.Body)
	}
	// A form without the assertion never reaches identity.
	delete(form, "passkey")
	if rec := postTo(t, p, PasskeyPath, form, tok); rec.Code != http.StatusBadRequest || len(fake.passkeySignIns) != 2 {
		t.Errorf("without an assertion = %d, identity asked %d times", rec.Code, len(fake.passkeySignIns))
	}
}

// Under the required policy the enrolment offers a passkey beside the TOTP key: a creation
// ceremony whose form posts back as an enrolment; where identity cannot run WebAuthn the page
// shows the key alone.
func TestAnEnrolmentAtSignInOffersToCreateAPasskeyInsteadOfTheKey(t *testing.T) {
	fake := newFake()
	fake.secondFactor, fake.enrol, fake.enrolOptions = "flow-secret", true, `{"challenge":"Y2hhbGxlbmdl","user":{"id":"dQ"}}`
	p, _ := newPage(fake)
	rec := submitSignIn(t, p)
	body := rec.Body.String()
	form := regexp.MustCompile(`(?s)<form [^>]*id="passkey-form".*?</form>`).FindString(body)
	if rec.Code != http.StatusOK || !strings.Contains(body, "JBSWY3DPEHPK3PXP") || !strings.Contains(form, `data-mode="create"`) ||
		!strings.Contains(form, `name="enrol" value="1"`) || !strings.Contains(form, `name="passkey_state" value="enrol-state"`) || !strings.Contains(body, "Create a passkey") {
		t.Fatalf("enrolment with a passkey = %d:\n%s", rec.Code, body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-") {
		t.Errorf("CSP %q does not allow the ceremony's script", csp)
	}
	fake.recovery = []string{"abcde-fghjk"}
	rec = postTo(t, p, SecondFactorPath, secondStepForm("flow-secret", "", "enrol", "1", "passkey", `{"id":"new"}`, "passkey_state", "enrol-state"), tok)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "abcde-fghjk") {
		t.Fatalf("the created passkey = %d:\n%s", rec.Code, rec.Body)
	}
	if got := fake.factors[0]; got.GetPasskey() != `{"id":"new"}` || got.GetPasskeyState() != "enrol-state" || got.GetFlow() != "flow-secret" {
		t.Errorf("VerifySecondFactor = %v", got)
	}
	fake.enrolOptions = ""
	rec = submitSignIn(t, p)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "passkey-form") || !strings.Contains(rec.Body.String(), "JBSWY3DPEHPK3PXP") {
		t.Errorf("enrolment without WebAuthn = %d, want the key alone:\n%s", rec.Code, rec.Body)
	}
}
