package login

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/reqid"
)

const verification = "0b8f3c2e-7a4d-4e61-9c1b-2d3e4f5a6b7c"

// postTo submits form to path with a matching CSRF pair (or none when token is "").
func postTo(t *testing.T, p *Page, path string, form url.Values, token string) *httptest.ResponseRecorder {
	t.Helper()
	if token != "" {
		form.Set(webpage.CSRFField, token)
	}
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-verify"), http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "203.0.113.9:51234"
	if token != "" {
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: token})
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

// pendingForm is a code or resend form as the "check your inbox" page posts it.
func pendingForm(op string) url.Values {
	return url.Values{
		"op": {op}, "client_id": {appID}, "redirect_uri": {redirectURI}, "state": {"st4te"}, "nonce": {"n0nce"},
		"scope": {"openid email"}, "email": {"ada@example.com"}, "verification": {verification}, "code": {"123456"},
	}
}

func TestSignUpThatNeedsVerificationShowsCheckYourInboxWithACodeForm(t *testing.T) {
	fake := newFake()
	fake.verification = verification
	p, _ := newPage(fake)
	token := webpage.NewToken()
	body := wantPage(t, postTo(t, p, Path, validForm(signUpType, ""), token), http.StatusOK)
	if !strings.Contains(body, "Check your inbox") || !strings.Contains(body, `name="code"`) || !strings.Contains(body, `action="`+VerifyPath+`"`) {
		t.Fatalf("not the check-your-inbox page:\n%s", body)
	}
	fields := hiddenFields(t, body)
	for k, want := range map[string]string{"verification": verification, "client_id": appID, "redirect_uri": redirectURI,
		"state": "st4te", "email": "ada@example.com", webpage.CSRFField: token} {
		if fields[k] != want {
			t.Errorf("hidden %s = %q, want %q", k, fields[k], want)
		}
	}
	if strings.Contains(body, password) {
		t.Fatal("the page repeats the password")
	}
	// The page is a function of the form and the verification id alone: the backend's answer for
	// a registered address (another id) gives the same page but for that id.
	fake.verification = "9d0c1b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	again := wantPage(t, postTo(t, p, Path, validForm(signUpType, ""), token), http.StatusOK)
	if strings.ReplaceAll(again, fake.verification, verification) != body {
		t.Fatal("two check-your-inbox pages differ beyond their verification id")
	}
}

func TestVerificationLinkShowsAConfirmButtonAndOnlyThePostVerifies(t *testing.T) {
	fake := newFake()
	fake.verifyURL = redirectURI + "?code=c0de&state=st4te"
	p, _ := newPage(fake)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, VerifyPath+"?token=s3cret", nil)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	body := wantPage(t, rec, http.StatusOK)
	if fields := hiddenFields(t, body); fields["token"] != "s3cret" || fields["op"] != opLink {
		t.Fatalf("confirm form fields = %v", fields)
	}
	if len(fake.links) != 0 {
		t.Fatal("opening the link verified without the button")
	}

	body = wantPage(t, postTo(t, p, VerifyPath, url.Values{"op": {opLink}, "token": {"s3cret"}}, webpage.NewToken()), http.StatusOK)
	if len(fake.links) != 1 || fake.links[0].GetToken() != "s3cret" || fake.links[0].GetClientIp() != "203.0.113.9" {
		t.Fatalf("link requests = %v", fake.links)
	}
	if !strings.Contains(body, `<meta http-equiv="refresh" content="0;url=`+html.EscapeString(fake.verifyURL)) {
		t.Fatalf("the verified page does not continue to the app:\n%s", body)
	}

	fake.verifyURL = ""
	body = wantPage(t, postTo(t, p, VerifyPath, url.Values{"op": {opLink}, "token": {"s3cret"}}, webpage.NewToken()), http.StatusOK)
	if strings.Contains(body, "refresh") || !strings.Contains(body, "Your email address is confirmed") {
		t.Fatalf("a verification without a request to continue:\n%s", body)
	}
}

func TestVerificationFailuresAnswerOneText(t *testing.T) {
	for _, code := range []codes.Code{codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition} {
		fake := newFake()
		fake.verifyErr = status.Error(code, "this link or code is no longer valid")
		p, _ := newPage(fake)
		body := wantPage(t, postTo(t, p, VerifyPath, url.Values{"op": {opLink}, "token": {"s3cret"}}, webpage.NewToken()), http.StatusBadRequest)
		if !strings.Contains(body, html.EscapeString(english(msgVerificationInvalid))) {
			t.Fatalf("%v link: %s", code, body)
		}
	}
	fake := newFake()
	fake.verifyErr = status.Error(codes.InvalidArgument, "this link or code is no longer valid")
	p, _ := newPage(fake)
	body := wantPage(t, postTo(t, p, VerifyPath, pendingForm(opCode), webpage.NewToken()), http.StatusBadRequest)
	if !strings.Contains(body, html.EscapeString(english(msgCodeInvalid))) || hiddenFields(t, body)["verification"] != verification {
		t.Fatalf("a refused code does not show the code form again with the one text:\n%s", body)
	}
}

func TestCodeFormContinuesTheRequestAndResendAsksForANewMail(t *testing.T) {
	fake := newFake()
	fake.verifyURL = redirectURI + "?code=c0de&state=st4te"
	p, _ := newPage(fake)
	wantPage(t, postTo(t, p, VerifyPath, pendingForm(opCode), webpage.NewToken()), http.StatusOK)
	if len(fake.codes) != 1 || fake.codes[0].GetCode() != "123456" || fake.codes[0].GetVerification() != verification || fake.codes[0].GetClientId() != appID {
		t.Fatalf("code requests = %v", fake.codes)
	}

	fake.verification = "9d0c1b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	body := wantPage(t, postTo(t, p, VerifyPath, pendingForm(opResend), webpage.NewToken()), http.StatusOK)
	if len(fake.resends) != 1 || fake.resends[0].GetEmail() != "ada@example.com" || fake.resends[0].GetParams().GetState() != "st4te" {
		t.Fatalf("resend requests = %v", fake.resends)
	}
	if hiddenFields(t, body)["verification"] != fake.verification || !strings.Contains(body, html.EscapeString(english(msgResent))) {
		t.Fatalf("the page after a resend does not take the new mail's code:\n%s", body)
	}

	fake.submitErr = status.Error(codes.ResourceExhausted, "too many")
	rec := postTo(t, p, VerifyPath, pendingForm(opResend), webpage.NewToken())
	if body := wantPage(t, rec, http.StatusTooManyRequests); !strings.Contains(body, html.EscapeString(english(msgTooMany))) {
		t.Fatalf("a refused resend:\n%s", body)
	}
}

func TestVerifyFormsWithoutCSRFOrWithBadFieldsCallNothing(t *testing.T) {
	for name, c := range map[string]struct {
		form   url.Values
		token  string
		status int
	}{
		"no CSRF pair":    {pendingForm(opCode), "", http.StatusForbidden},
		"unknown op":      {url.Values{"op": {"delete"}}, webpage.NewToken(), http.StatusBadRequest},
		"no op":           {url.Values{"token": {"x"}}, webpage.NewToken(), http.StatusBadRequest},
		"control in code": {func() url.Values { f := pendingForm(opCode); f.Set("code", "12\x0034"); return f }(), webpage.NewToken(), http.StatusBadRequest},
		"missing state":   {func() url.Values { f := pendingForm(opResend); f.Del("state"); return f }(), webpage.NewToken(), http.StatusBadRequest},
		"overlong token":  {url.Values{"op": {opLink}, "token": {strings.Repeat("a", maxToken+1)}}, webpage.NewToken(), http.StatusBadRequest},
		"bad email":       {func() url.Values { f := pendingForm(opResend); f.Set("email", "a\x1b@example.com"); return f }(), webpage.NewToken(), http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			wantPage(t, postTo(t, p, VerifyPath, c.form, c.token), c.status)
			if len(fake.codes)+len(fake.resends)+len(fake.links) != 0 {
				t.Fatal("a refused form reached identity")
			}
		})
	}
}

func TestCheckYourInboxSpeaksTheLanguageOfTheLink(t *testing.T) {
	fake := newFake()
	fake.verification = verification
	p, _ := newPage(fake)
	form := validForm(signUpType, "")
	form.Set("language", "de")
	body := wantPage(t, postTo(t, p, Path, form, webpage.NewToken()), http.StatusOK)
	if !strings.Contains(body, "Schau in dein Postfach") || hiddenFields(t, body)["language"] != "de" {
		t.Fatalf("the German sign-up's check-your-inbox page:\n%s", body)
	}
}
