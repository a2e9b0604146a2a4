package account

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// linkedMethods is a user with a password, idpA linked, idpB configured and one passkey.
func linkedMethods() *identityv1.SignInMethods {
	return &identityv1.SignInMethods{HasPassword: true, Providers: []*identityv1.AccountProvider{
		{Slot: "idpA", DisplayName: "Sandbox A", Linked: true, Email: "ada@idp.example", LinkedAt: "2026-11-20T08:30:00Z"},
		{Slot: "idpB", DisplayName: "Sandbox B"},
	}, Passkeys: []*identityv1.AccountPasskey{{Id: otherID, CreatedAt: "2026-11-21T09:00:00Z"}}}
}

func TestThePageListsLinkedProvidersWithUnlinkAndTheOthersWithLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		password bool
		want     []string
		absent   []string
	}{
		{name: "a user with a password", password: true,
			want: []string{"Sandbox A", "ada@idp.example", "2026-11-20 08:30 UTC", `id="unlink-idpA"`, `id="unlink-password-idpA"`,
				`id="link-idpB" href="/account?client_id=` + appID + `&amp;link=idpB"`, "Link Sandbox B", `data-passkey="` + otherID + `"`, `id="passkey-remove-password-` + otherID + `"`},
			absent: []string{`id="link-idpA"`, `id="unlink-idpB"`}},
		{name: "a user without a password is not asked for one",
			want:   []string{`id="unlink-idpA"`, `data-passkey="` + otherID + `"`},
			absent: []string{`id="unlink-password-idpA"`, `id="passkey-remove-password-`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.methods = linkedMethods()
			fake.methods.HasPassword = tc.password
			fake.mfa = &identityv1.SecondFactors{Policy: "optional", Passkeys: 1}
			p, _ := newPage(fake)
			body := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID, "", signedIn)).Body.String()
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(body, a) {
					t.Errorf("page shows %q", a)
				}
			}
		})
	}
}

func TestLinkingSendsTheBrowserThroughTheProviderWithTheLoginFlowCookie(t *testing.T) {
	fake := newFake()
	fake.methods = linkedMethods()
	p, _ := newPage(fake)
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID+"&language=de&link=idpB", "", signedIn))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != providerURL {
		t.Fatalf("link = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	flow := cookie(rec, "berth_idp_flow")
	if flow == nil || flow.Value != "sealed-flow" || flow.Path != "/login/idp" || !flow.HttpOnly || flow.SameSite != http.SameSiteLaxMode {
		t.Errorf("flow cookie = %+v, want the login page's provider flow", flow)
	}
	got := fake.received("StartProviderLink")
	if len(got) != 1 {
		t.Fatalf("StartProviderLink calls = %v", got)
	}
	if r := got[0].req.(*identityv1.StartProviderLinkRequest); r.GetSlot() != "idpB" || r.GetLanguage() != "de" || r.GetAccessToken() != accessToken(sessionID) {
		t.Errorf("StartProviderLink = %v", r)
	}
}

func TestALinkTheCallbackRefusedShowsItsNoticeAsAnAlert(t *testing.T) {
	for notice, want := range map[string]string{
		"linked":    `class="ok" role="status">The provider account is linked`,
		"linkTaken": `class="alert" role="alert">That account at the provider is linked to another user`,
		"bogus":     "",
	} {
		fake := newFake()
		p, _ := newPage(fake)
		body := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID+"&notice="+notice, "", signedIn)).Body.String()
		if want != "" && !strings.Contains(body, want) {
			t.Errorf("notice %s: page lacks %q", notice, want)
		}
		if want == "" && (strings.Contains(body, `role="status"`) || strings.Contains(body, `role="alert"`)) {
			t.Errorf("an unknown notice was shown")
		}
	}
}

func TestUnlinkAndFactorRemovalNeedTheCSRFTokenAndPassTheCurrentPassword(t *testing.T) {
	for _, tc := range []struct {
		name, method, notice string
		fields               []string
		check                func(t *testing.T, req any)
	}{
		{name: "unlink", method: "UnlinkProvider", notice: "unlinked", fields: []string{"action", "unlink", "slot", "idpA", "current_password", userPassword},
			check: func(t *testing.T, req any) {
				if r := req.(*identityv1.UnlinkProviderRequest); r.GetSlot() != "idpA" || r.GetCurrentPassword() != userPassword || r.GetClientIp() != "203.0.113.9" {
					t.Errorf("UnlinkProvider = %v", r)
				}
			}},
		{name: "remove a passkey", method: "RemoveSecondFactor", notice: "factorRemoved",
			fields: []string{"action", "removeFactor", "kind", "passkey", "factor_id", strings.ToUpper(otherID), "current_password", userPassword},
			check: func(t *testing.T, req any) {
				if r := req.(*identityv1.RemoveSecondFactorRequest); r.GetKind() != "passkey" || r.GetFactorId() != otherID || r.GetCurrentPassword() != userPassword {
					t.Errorf("RemoveSecondFactor = %v", r)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			p, _ := newPage(fake)
			c, token := csrfPair(t, p)
			rec := serve(p, request(t, http.MethodPost, Path, form("wrong-token", tc.fields...), c, signedIn))
			if rec.Code != http.StatusForbidden || len(fake.received(tc.method)) != 0 {
				t.Fatalf("a wrong CSRF token = %d, %d calls; want 403 and none", rec.Code, len(fake.received(tc.method)))
			}
			rec = serve(p, request(t, http.MethodPost, Path, form(token, tc.fields...), c, signedIn))
			back := Path + "?" + url.Values{"client_id": {appID}, "notice": {tc.notice}}.Encode()
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != back {
				t.Fatalf("%s = %d %q", tc.name, rec.Code, rec.Header().Get("Location"))
			}
			got := fake.received(tc.method)
			if len(got) != 1 {
				t.Fatalf("%s calls = %d", tc.method, len(got))
			}
			tc.check(t, got[0].req)
		})
	}
}

func TestRefusedRemovalsSayWhichRuleHeld(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		fields []string
		err    error
		status int
		want   string
	}{
		{"last way to sign in", "UnlinkProvider", []string{"action", "unlink", "slot", "idpA"},
			fault.InvalidField("slot", "last").WithReason("last_way"), http.StatusConflict, "This is the last way to sign in"},
		{"required policy", "RemoveSecondFactor", []string{"action", "removeFactor", "kind", "totp", "current_password", "pw"},
			fault.InvalidField("kind", "required").WithReason("required"), http.StatusConflict, "requires two-step verification"},
		{"wrong password", "UnlinkProvider", []string{"action", "unlink", "slot", "idpA", "current_password", "nope"},
			fault.Invalid("current_password", "wrong"), http.StatusBadRequest, "current password"},
		{"gone", "RemoveSecondFactor", []string{"action", "removeFactor", "kind", "passkey", "factor_id", otherID},
			fault.NotFound("second factor"), http.StatusNotFound, "This was removed already."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.errs[tc.method] = wire(tc.err)
			p, _ := newPage(fake)
			c, token := csrfPair(t, p)
			rec := serve(p, request(t, http.MethodPost, Path, form(token, tc.fields...), c, signedIn))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("= %d, want %d with %q:\n%s", rec.Code, tc.status, tc.want, rec.Body)
			}
		})
	}
}

func TestALinkToAnEmptiedSlotOrAnUnknownSlotShowsThePageWithoutIdentityOrTheProvider(t *testing.T) {
	fake := newFake()
	fake.errs["StartProviderLink"] = wire(fault.InvalidField("provider", "slot").WithReason("slot"))
	p, _ := newPage(fake)
	rec := serve(p, request(t, http.MethodGet, Path+"?client_id="+appID+"&link=idpB", "", signedIn))
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "not possible for your account right now") || cookie(rec, "berth_idp_flow") != nil {
		t.Errorf("a link to an emptied slot = %d:\n%s", rec.Code, rec.Body)
	}
	rec = serve(p, request(t, http.MethodGet, Path+"?client_id="+appID+"&link=idpE", "", signedIn))
	if rec.Code != http.StatusBadRequest || len(fake.received("StartProviderLink")) != 1 {
		t.Errorf("a link to an unknown slot = %d, %d starts", rec.Code, len(fake.received("StartProviderLink")))
	}
}

func TestMalformedSignInMethodFormsAreRefusedBeforeIdentity(t *testing.T) {
	for name, fields := range map[string][]string{
		"unknown slot":          {"action", "unlink", "slot", "idpE"},
		"slot with a control":   {"action", "unlink", "slot", "idpA\x00"},
		"unknown factor kind":   {"action", "removeFactor", "kind", "sms"},
		"passkey without an id": {"action", "removeFactor", "kind", "passkey"},
		"passkey id not a UUID": {"action", "removeFactor", "kind", "passkey", "factor_id", "x"},
		"password with control": {"action", "removeFactor", "kind", "totp", "current_password", "a\x07"},
	} {
		fake := newFake()
		p, _ := newPage(fake)
		c, token := csrfPair(t, p)
		rec := serve(p, request(t, http.MethodPost, Path, form(token, fields...), c, signedIn))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, rec.Code)
		}
		for _, m := range []string{"StartProviderLink", "UnlinkProvider", "RemoveSecondFactor"} {
			if len(fake.received(m)) != 0 {
				t.Errorf("%s reached identity's %s", name, m)
			}
		}
	}
}
