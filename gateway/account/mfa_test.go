package account

import (
	"net/http"
	"strings"
	"testing"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestThePageOffersTheAuthenticatorOnlyWhereThePolicyAllows(t *testing.T) {
	for _, tc := range []struct {
		policy string
		totp   bool
		want   []string
		absent []string
	}{
		{"optional", false, []string{`id="start-totp"`, "Off: signing in asks for your password only."}, []string{"requires it"}},
		{"required", false, []string{`id="start-totp"`, "This application requires it"}, nil},
		{"optional", true, []string{`id="regenerate-codes"`, "Recovery codes left: 7"}, []string{`id="start-totp"`}},
		{"off", false, nil, []string{`id="mfa"`, `id="start-totp"`}},
	} {
		fake := newFake()
		fake.mfa = &identityv1.SecondFactors{Policy: tc.policy, Totp: tc.totp, RecoveryCodesLeft: 7}
		p, _ := newPage(fake)
		body := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn)).Body.String()
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s/%v: page lacks %q", tc.policy, tc.totp, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(body, a) {
				t.Errorf("%s/%v: page shows %q", tc.policy, tc.totp, a)
			}
		}
	}
}

func TestEnrollingShowsTheKeyAsAQRCodeThenTheRecoveryCodesOnce(t *testing.T) {
	fake := newFake()
	p, logs := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "totpStart"), c, signedIn))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "<svg") || !strings.Contains(body, totpSecret) || !strings.Contains(body, `value="totpConfirm"`) {
		t.Fatalf("enrolment page = %d:\n%s", rec.Code, body)
	}
	if strings.Contains(body, "otpauth://") {
		t.Error("the QR code's URL reached the markup as text")
	}
	if csp := rec.Header().Get("Content-Security-Policy"); strings.Contains(csp, "img-src") {
		t.Errorf("the inline QR code needs no img-src: %s", csp)
	}
	c, token = csrfPair(t, p)
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "totpConfirm", "code", "000000", "current_password", userPassword), c, signedIn))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "This code is not correct") || !strings.Contains(rec.Body.String(), totpSecret) {
		t.Fatalf("a wrong first code = %d:\n%s", rec.Code, rec.Body)
	}
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "totpConfirm", "code", goodCode, "current_password", "wrong"), c, signedIn))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "The current password is not correct") || !strings.Contains(rec.Body.String(), totpSecret) {
		t.Fatalf("a wrong current password = %d:\n%s", rec.Code, rec.Body)
	}
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "totpConfirm", "code", goodCode, "current_password", userPassword), c, signedIn))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "abcde-fghjk") || !strings.Contains(rec.Body.String(), `id="recovery-codes"`) {
		t.Fatalf("confirmed enrolment = %d:\n%s", rec.Code, rec.Body)
	}
	got := fake.received("ConfirmTotpEnrolment")
	if r := got[len(got)-1].req.(*identityv1.ConfirmTotpEnrolmentRequest); r.GetAccessToken() != accessToken(sessionID) || r.GetClientIp() != "203.0.113.9" || r.GetCurrentPassword() != userPassword {
		t.Errorf("confirmation = %v", r)
	}
	if strings.Contains(logs.String(), "abcde-fghjk") || strings.Contains(logs.String(), totpSecret) || strings.Contains(logs.String(), userPassword) {
		t.Error("a recovery code, the secret or the password reached the log")
	}
	page := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn)).Body.String()
	if strings.Contains(page, "abcde-fghjk") || !strings.Contains(page, "On: signing in asks") {
		t.Errorf("the page after the enrolment:\n%s", page)
	}
}

func TestRegeneratingRecoveryCodesShowsTheNewOnes(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "recoveryCodes"), c, signedIn))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "xyzab-cdefg") {
		t.Fatalf("= %d:\n%s", rec.Code, rec.Body)
	}
}

func TestAnOverlongOrControlCharacterCodeIsRefusedBeforeIdentity(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	for _, code := range []string{strings.Repeat("1", 33), "12\x0034"} {
		rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "totpConfirm", "code", code), c, signedIn))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("code %q = %d", code, rec.Code)
		}
	}
	if n := len(fake.received("ConfirmTotpEnrolment")); n != 0 {
		t.Errorf("identity was asked %d times", n)
	}
}

func TestAddingAPasskeyRunsTheBrowsersPromptThenShowsCodesOnlyForTheFirstFactor(t *testing.T) {
	fake := newFake()
	p, _ := newPage(fake)
	c, token := csrfPair(t, p)
	rec := serve(p, request(t, http.MethodPost, Path, form(token, "action", "passkeyStart"), c, signedIn))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `data-mode="create"`) || !strings.Contains(body, `value="passkeyFinish"`) || !strings.Contains(body, `name="current_password"`) ||
		!strings.Contains(body, `name="passkey_state" value="sealed-state"`) {
		t.Fatalf("passkey page = %d:\n%s", rec.Code, body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-") {
		t.Errorf("CSP %q does not allow the prompt's script", csp)
	}
	c, token = csrfPair(t, p)
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "passkeyFinish", "passkey", `{"id":"x"}`, "passkey_state", "sealed-state", "current_password", userPassword), c, signedIn))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "abcde-fghjk") {
		t.Fatalf("the first passkey = %d:\n%s", rec.Code, rec.Body)
	}
	got := fake.received("FinishPasskeyRegistration")
	wrong := serve(p, request(t, http.MethodPost, Path, form(token, "action", "passkeyFinish", "passkey", `{"id":"z"}`, "passkey_state", "sealed-state", "current_password", "wrong"), c, signedIn))
	if wrong.Code != http.StatusBadRequest || !strings.Contains(wrong.Body.String(), "The current password is not correct") {
		t.Errorf("a passkey with a wrong current password = %d:\n%s", wrong.Code, wrong.Body)
	}
	if r := got[0].req.(*identityv1.FinishPasskeyRegistrationRequest); r.GetCredential() != `{"id":"x"}` || r.GetState() != "sealed-state" || r.GetAccessToken() != accessToken(sessionID) {
		t.Errorf("finish = %v", r)
	}
	rec = serve(p, request(t, http.MethodPost, Path, form(token, "action", "passkeyFinish", "passkey", `{"id":"y"}`, "passkey_state", "sealed-state", "current_password", userPassword), c, signedIn))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path+"?client_id="+appID+"&notice=passkey" {
		t.Errorf("a second passkey = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	page := serve(p, request(t, http.MethodGet, rec.Header().Get("Location"), "", signedIn)).Body.String()
	if !strings.Contains(page, "Your passkey was added.") || !strings.Contains(page, "Passkeys: 2") {
		t.Errorf("the page after the second passkey:\n%s", page)
	}
}
