package console

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// secondStep signs the browser in to the second factor's step and answers that page.
func secondStep(t *testing.T, b *browser) string {
	t.Helper()
	rec := b.post(SignInPath, url.Values{"email": {memberEmail}, "password": {memberPass}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `name="challenge" value="`+challenge+`"`) {
		t.Fatalf("sign-in = %d, want the second step:\n%s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestTheSecondStepOffersAPasskeyOnlyWhenTheAccountHoldsOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		factors []*identityv1.MemberFactor
		offered bool
	}{
		{"TOTP alone", []*identityv1.MemberFactor{{Id: keyID, Kind: "totp"}}, false},
		{"a passkey", []*identityv1.MemberFactor{{Id: passkeyID, Kind: "passkey", Name: "Laptop"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.secondFactor, f.factors = true, tc.factors
			c, _ := newConsole(t, f)
			page := secondStep(t, newBrowser(t, c))
			form := `<form method="post" action="` + PasskeySignInPath + `" id="passkey-form" data-mode="get" data-options="` + html.EscapeString(fakeAssertionOptions) + `">`
			offered := strings.Contains(page, form) && strings.Contains(page, `name="passkey_state" value="`+fakeState+`"`) &&
				strings.Contains(page, `<script src="`+PasskeyScriptPath+`"></script>`)
			if offered != tc.offered || !strings.Contains(page, `id="code"`) {
				t.Errorf("passkey offered = %v, want %v (the code field always):\n%s", offered, tc.offered, page)
			}
			if in := f.received("StartMemberPasskeyAssertion"); len(in) != 1 || in[0].req.(*identityv1.MemberChallengeRequest).GetChallenge() != challenge || in[0].bearer != "" {
				t.Errorf("StartMemberPasskeyAssertion = %+v, want the challenge with the service's credential", in)
			}
		})
	}
}

func TestAPasskeyFinishesTheConsoleSignIn(t *testing.T) {
	f := newFake()
	f.secondFactor, f.factors = true, []*identityv1.MemberFactor{{Id: passkeyID, Kind: "passkey", Name: "Laptop"}}
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	secondStep(t, b)
	rec := b.post(PasskeySignInPath, url.Values{"challenge": {challenge}, "passkey": {`{"id":"a2V5"}`}, "passkey_state": {fakeState}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path || b.cookies[SessionCookie] == nil {
		t.Fatalf("passkey = %d %q, want a session and home:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	in := f.received("VerifyMemberPasskey")[0]
	if req := in.req.(*identityv1.VerifyMemberPasskeyRequest); req.GetChallenge() != challenge || req.GetPasskey() != `{"id":"a2V5"}` ||
		req.GetState() != fakeState || req.GetClientAddress() == "" || in.bearer != "" {
		t.Errorf("VerifyMemberPasskey = %v (bearer %q)", req, in.bearer)
	}
}

func TestARefusedPasskeyPostIsAnsweredOnTheSignInPages(t *testing.T) {
	good := url.Values{"challenge": {challenge}, "passkey": {`{"id":"a2V5"}`}, "passkey_state": {fakeState}}
	without := func(key string) url.Values {
		v := url.Values{}
		for k, x := range good {
			if k != key {
				v[k] = x
			}
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		err    error
		status int
		want   string
	}{
		{"no assertion", without("passkey"), nil, http.StatusBadRequest, "(passkey)"},
		{"no state", without("passkey_state"), nil, http.StatusBadRequest, "(passkey_state)"},
		{"no challenge", without("challenge"), nil, http.StatusBadRequest, "(challenge)"},
		{"a form larger than any assertion", url.Values{"challenge": {challenge}, "passkey": {strings.Repeat("x", maxPasskey+1)}, "passkey_state": {fakeState}}, nil, http.StatusRequestEntityTooLarge, `id="problem"`},
		{"a passkey identity cannot verify", good, grpcx.StatusOf(fault.Invalid("passkey", "no")).Err(), http.StatusUnauthorized, "The passkey could not be verified"},
		{"a spent challenge", good, grpcx.StatusOf(fault.Invalid("challenge", "spent")).Err(), http.StatusUnauthorized, `id="sign-in"`},
		{"too many attempts", good, status.Error(codes.ResourceExhausted, "limit"), http.StatusTooManyRequests, "Too many"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.secondFactor, f.factors = true, []*identityv1.MemberFactor{{Id: passkeyID, Kind: "passkey"}}
			f.errs["VerifyMemberPasskey"] = tc.err
			c, _ := newConsole(t, f)
			b := newBrowser(t, c)
			secondStep(t, b)
			rec := b.post(PasskeySignInPath, tc.form)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) || b.cookies[SessionCookie] != nil {
				t.Errorf("answer = %d, want %d with %q and no session:\n%s", rec.Code, tc.status, tc.want, rec.Body)
			}
		})
	}
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.get(SignInPath)
	if rec := b.do(http.MethodPost, PasskeySignInPath, good); rec.Code != http.StatusForbidden || len(f.received("VerifyMemberPasskey")) != 0 {
		t.Errorf("a post without the CSRF token = %d, %d calls", rec.Code, len(f.received("VerifyMemberPasskey")))
	}
}

func TestTheSecurityPageListsPasskeysAndAddsOneWithItsNameAndThePassword(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	page := b.get(SecurityPath).Body.String()
	if !strings.Contains(page, `id="no-passkeys"`) || !strings.Contains(page, `data-mode="create" data-options="`+html.EscapeString(fakeRegistrationOptions)+`"`) ||
		!strings.Contains(page, `<script src="`+PasskeyScriptPath+`"></script>`) {
		t.Fatalf("security page without passkeys:\n%s", page)
	}
	add := url.Values{"action": {"addPasskey"}, "name": {"Laptop"}, "current_password": {memberPass}, "passkey": {`{"id":"bmV3"}`}, "passkey_state": {fakeState}}
	rec := b.post(SecurityPath, add)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "eeee-ffff") {
		t.Fatalf("the first passkey = %d, want its recovery codes:\n%s", rec.Code, rec.Body)
	}
	in := f.received("FinishMemberPasskeyRegistration")[0]
	if req := in.req.(*identityv1.FinishMemberPasskeyRegistrationRequest); req.GetName() != "Laptop" || req.GetCredential() != `{"id":"bmV3"}` ||
		req.GetState() != fakeState || req.GetCurrentPassword() != memberPass || in.bearer != "Bearer operator-token-1" {
		t.Errorf("FinishMemberPasskeyRegistration = %v with %q", req, in.bearer)
	}
	add.Set("name", "Phone")
	if rec := b.post(SecurityPath, add); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SecurityPath+"?notice=passkeyAdded" {
		t.Errorf("a second passkey = %d %q, want back with the notice", rec.Code, rec.Header().Get("Location"))
	}
	page = b.get(SecurityPath + "?notice=passkeyAdded").Body.String()
	for _, want := range []string{"The passkey was added.", `<tr data-passkey="` + passkeyID + `"><td>Laptop</td>`, `<option value="` + passkeyID + `">Laptop</option>`, "Not yet"} {
		if !strings.Contains(page, want) {
			t.Errorf("security page lacks %q:\n%s", want, page)
		}
	}
}

func TestRemovingAPasskeyAsksForThePasswordAndNamesItsID(t *testing.T) {
	f := newFake()
	f.factors = []*identityv1.MemberFactor{{Id: passkeyID, Kind: "passkey", Name: "Laptop"}}
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
	}{
		{"no password", url.Values{"action": {"removePasskey"}, "passkey_id": {passkeyID}}, "current_password"},
		{"an id that is not a UUID", url.Values{"action": {"removePasskey"}, "passkey_id": {"laptop"}, "current_password": {memberPass}}, "passkey_id"},
		{"a name that is too long", url.Values{"action": {"addPasskey"}, "name": {strings.Repeat("n", 65)}, "current_password": {memberPass}, "passkey": {"{}"}, "passkey_state": {fakeState}}, "name"},
		{"an unknown action", url.Values{"action": {"dropEverything"}}, "action"},
	} {
		if rec := b.post(SecurityPath, tc.form); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "("+tc.field+")") {
			t.Errorf("%s = %d, want 400 naming %s:\n%s", tc.name, rec.Code, tc.field, rec.Body)
		}
	}
	if n := len(f.received("RemoveMemberPasskey")) + len(f.received("FinishMemberPasskeyRegistration")); n != 0 {
		t.Errorf("refused forms reached identity %d times", n)
	}
	rec := b.post(SecurityPath, url.Values{"action": {"removePasskey"}, "passkey_id": {strings.ToUpper(passkeyID)}, "current_password": {memberPass}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SecurityPath+"?notice=passkeyRemoved" {
		t.Fatalf("remove = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if req := f.received("RemoveMemberPasskey")[0].req.(*identityv1.RemoveMemberPasskeyRequest); req.GetPasskeyId() != passkeyID || req.GetCurrentPassword() != memberPass {
		t.Errorf("RemoveMemberPasskey = %v", req)
	}
	f.errs["RemoveMemberPasskey"] = grpcx.StatusOf(fault.Invalid("current_password", "wrong")).Err()
	if rec := b.post(SecurityPath, url.Values{"action": {"removePasskey"}, "passkey_id": {passkeyID}, "current_password": {"nope"}}); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "(current_password)") {
		t.Errorf("a wrong password = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestWithoutPasskeyCeremoniesTheSecurityPageSaysPasskeysCannotBeAdded(t *testing.T) {
	f := newFake()
	f.errs["StartMemberPasskeyRegistration"] = status.Error(codes.Unavailable, "passkeys need the deployment's public URL")
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	rec := b.get(SecurityPath)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="passkeys-unavailable"`) || strings.Contains(rec.Body.String(), `id="passkey-form"`) {
		t.Errorf("security page = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestThePasskeyScriptIsServedAsAFileForTheStrictPolicy(t *testing.T) {
	c, _ := newConsole(t, newFake())
	rec := newBrowser(t, c).get(PasskeyScriptPath)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") ||
		!strings.Contains(rec.Body.String(), "navigator.credentials.create") {
		t.Errorf("passkey script = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestRemovingTheTOTPFactorAsksForThePassword(t *testing.T) {
	f := newFake()
	f.factors = []*identityv1.MemberFactor{{Id: passkeyID, Kind: "totp"}}
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	if page := b.get(SecurityPath); !strings.Contains(page.Body.String(), `id="remove-totp"`) {
		t.Fatalf("the security page of a member with TOTP offers no removal:\n%s", page.Body)
	}
	if rec := b.post(SecurityPath, url.Values{"action": {"removeTotp"}}); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "(current_password)") {
		t.Errorf("no password = %d, want 400 naming current_password:\n%s", rec.Code, rec.Body)
	}
	if n := len(f.received("RemoveMemberTotp")); n != 0 {
		t.Errorf("a refused form reached identity %d times", n)
	}
	rec := b.post(SecurityPath, url.Values{"action": {"removeTotp"}, "current_password": {memberPass}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SecurityPath+"?notice=totpRemoved" {
		t.Fatalf("remove = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if req := f.received("RemoveMemberTotp")[0].req.(*identityv1.RemoveMemberTotpRequest); req.GetCurrentPassword() != memberPass {
		t.Errorf("RemoveMemberTotp = %v", req)
	}
	f.errs["RemoveMemberTotp"] = grpcx.StatusOf(fault.Invalid("current_password", "wrong")).Err()
	if rec := b.post(SecurityPath, url.Values{"action": {"removeTotp"}, "current_password": {"nope"}}); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "(current_password)") {
		t.Errorf("a wrong password = %d:\n%s", rec.Code, rec.Body)
	}
}
