package login

import (
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
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// fakeProviders adds identity's provider RPCs to fakeLogin, answering as programmed.
type fakeProviders struct {
	*fakeLogin
	pmu        sync.Mutex
	startErr   error
	finishErr  error
	confirmErr error
	outcome    *identityv1.ProviderOutcome
	starts     []*identityv1.StartProviderSignInRequest
	finishes   []*identityv1.FinishProviderSignInRequest
	confirms   []*identityv1.ConfirmProviderLinkRequest
	// proofs is what DescribeProviderLink answers (describeLinkErr instead when set); sends
	// records SendProviderLinkCode, which answers "bound-link" (sendErr instead when set).
	proofs          *identityv1.ProviderLinkProofs
	describeLinkErr error
	sendErr         error
	sends           []*identityv1.SendProviderLinkCodeRequest
}

func (f *fakeProviders) DescribeProviderLink(_ context.Context, in *identityv1.ProviderLinkRef, _ ...grpc.CallOption) (*identityv1.ProviderLinkProofs, error) {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	if f.describeLinkErr != nil {
		return nil, f.describeLinkErr
	}
	out := proto.Clone(f.proofs).(*identityv1.ProviderLinkProofs)
	out.CodeSent = out.CodeSent || in.GetLink() == "bound-link"
	return out, nil
}

func (f *fakeProviders) SendProviderLinkCode(_ context.Context, in *identityv1.SendProviderLinkCodeRequest, _ ...grpc.CallOption) (*identityv1.ProviderLinkRef, error) {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	f.sends = append(f.sends, in)
	if f.sendErr != nil {
		return nil, f.sendErr
	}
	return &identityv1.ProviderLinkRef{Link: "bound-link"}, nil
}

const providerURL = "https://idp.example.com/authorize?client_id=berth&state=s"

func (f *fakeProviders) StartProviderSignIn(_ context.Context, in *identityv1.StartProviderSignInRequest, _ ...grpc.CallOption) (*identityv1.ProviderRedirect, error) {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	f.starts = append(f.starts, in)
	if f.startErr != nil {
		return nil, f.startErr
	}
	return &identityv1.ProviderRedirect{Url: providerURL, Flow: "sealed-flow"}, nil
}

func (f *fakeProviders) FinishProviderSignIn(_ context.Context, in *identityv1.FinishProviderSignInRequest, _ ...grpc.CallOption) (*identityv1.ProviderOutcome, error) {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	f.finishes = append(f.finishes, in)
	if f.finishErr != nil {
		return nil, f.finishErr
	}
	return f.outcome, nil
}

func (f *fakeProviders) ConfirmProviderLink(_ context.Context, in *identityv1.ConfirmProviderLinkRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	f.confirms = append(f.confirms, in)
	if f.confirmErr != nil {
		return nil, f.confirmErr
	}
	return &identityv1.LoginRedirect{Url: redirectURI + "?code=c0de&state=st4te&service=idpA"}, nil
}

func newProviderPage() (*Page, *fakeProviders, *strings.Builder) {
	fake := &fakeProviders{fakeLogin: newFake(), outcome: &identityv1.ProviderOutcome{Url: redirectURI + "?code=c0de&state=st4te&service=idpA"},
		proofs: &identityv1.ProviderLinkProofs{Email: "ada@example.com", ProviderName: "Provider A", Password: true,
			Params: &identityv1.LoginParams{ClientId: appID, RedirectUri: redirectURI, State: "st4te", Nonce: "n0nce"}}}
	fake.providers = []*identityv1.LoginProvider{{Slot: "idpA", DisplayName: "Provider A"}, {Slot: "idpC", DisplayName: "Provider <C>"}}
	logs := &strings.Builder{}
	p, _ := newPage(fake.fakeLogin)
	p.client = fake
	p.log = slog.New(slog.NewJSONHandler(logs, nil))
	return p, fake, logs
}

func serve(t *testing.T, p *Page, method, target string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(reqid.With(t.Context(), "req-idp"), method, target, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

func TestTheSignInAndSignUpFormsOfferOneLinkPerConfiguredProvider(t *testing.T) {
	p, _, _ := newProviderPage()
	for _, typ := range []string{"signIn", signUpType} {
		rec := get(t, p, linkQuery(typ))
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, "Continue with Provider A") || !strings.Contains(body, "Continue with Provider &lt;C&gt;") {
			t.Fatalf("%s form (%d) lacks the provider links:\n%s", typ, rec.Code, body)
		}
		m := providerHref.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s form: no provider link", typ)
		}
		link, err := url.Parse(html.UnescapeString(m[1]))
		want := linkQuery(typ)
		want.Set("slot", "idpA")
		if err != nil || link.Path != ProviderPath || link.Query().Encode() != want.Encode() {
			t.Errorf("%s form: provider link %q, want %s?%s", typ, m[1], ProviderPath, want.Encode())
		}
	}
}

var providerHref = regexp.MustCompile(`<a class="provider" href="([^"]+)">`)

func TestAProviderLinkSetsALaxFlowCookieAndSendsTheBrowserToTheProvider(t *testing.T) {
	p, fake, _ := newProviderPage()
	q := linkQuery(signUpType)
	q.Set("slot", "idpA")
	rec := serve(t, p, http.MethodGet, ProviderPath+"?"+q.Encode())
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != providerURL {
		t.Fatalf("start = %d to %q, want 303 to the provider", rec.Code, rec.Header().Get("Location"))
	}
	var flow *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == flowCookie {
			flow = c
		}
	}
	if flow == nil || flow.Value != "sealed-flow" || flow.SameSite != http.SameSiteLaxMode || !flow.HttpOnly || flow.Path != ProviderPath || flow.MaxAge != flowMaxAge {
		t.Errorf("flow cookie = %+v, want the sealed flow, Lax, HttpOnly, on %s, %ds", flow, ProviderPath, flowMaxAge)
	}
	if len(fake.starts) != 1 || fake.starts[0].GetSlot() != "idpA" || fake.starts[0].GetParams().GetState() != "st4te" {
		t.Errorf("StartProviderSignIn got %v", fake.starts)
	}
	if rec := serve(t, p, http.MethodPost, ProviderPath+"?"+q.Encode()); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST to the start = %d, want 405", rec.Code)
	}
}

func TestACallbackContinuesToTheAppAndSpendsItsFlowCookie(t *testing.T) {
	p, fake, _ := newProviderPage()
	rec := serve(t, p, http.MethodGet, ProviderCallbackPath+"?code=the-code&state=the-state", &http.Cookie{Name: flowCookie, Value: "sealed-flow"})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), redirectURI+"?") {
		t.Fatalf("callback = %d to %q, want 303 to the app", rec.Code, rec.Header().Get("Location"))
	}
	if len(fake.finishes) != 1 || fake.finishes[0].GetFlow() != "sealed-flow" || fake.finishes[0].GetCode() != "the-code" || fake.finishes[0].GetState() != "the-state" {
		t.Errorf("FinishProviderSignIn got %v", fake.finishes)
	}
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].Name != flowCookie || c[0].MaxAge >= 0 {
		t.Errorf("cookies = %v, want the flow cookie deleted", c)
	}
}

// Every refusal of a provider sign-in ends on the error card with a status below 500 and a log
// line that says why, carrying the card's reference.
func TestProviderRefusalsEndOnTheErrorCardWithTheirReasonLogged(t *testing.T) {
	refusal := func(reason string) error {
		return grpcx.StatusOf(fault.InvalidField("provider", "idpA said why: %s", reason).WithReason(reason)).Err()
	}
	for _, tc := range []struct {
		name    string
		query   string
		noFlow  bool
		err     error
		status  int
		message string
	}{
		{name: "no flow cookie", query: "code=c&state=s", noFlow: true, status: http.StatusBadRequest, message: "login.error.idp.state"},
		{name: "bad state", query: "code=c&state=s", err: refusal("state"), status: http.StatusBadRequest, message: "login.error.idp.state"},
		{name: "denied consent", query: "error=access_denied&state=s", err: refusal("denied"), status: http.StatusBadRequest, message: "login.error.idp.denied"},
		{name: "expired or reused code", query: "code=c&state=s", err: refusal("code"), status: http.StatusBadRequest, message: "login.error.idp.failed"},
		{name: "bad signature or wrong issuer", query: "code=c&state=s", err: refusal("token"), status: http.StatusBadRequest, message: "login.error.idp.failed"},
		{name: "unreachable provider", query: "code=c&state=s", err: refusal("unreachable"), status: http.StatusBadRequest, message: "login.error.idp.unreachable"},
		{name: "unverified address of an account", query: "code=c&state=s", err: refusal("taken"), status: http.StatusForbidden, message: "login.error.idp.taken"},
		{name: "a parameter with a control character", query: "code=c%1b&state=s", status: http.StatusBadRequest, message: "login.error.idp.failed"},
		{name: "identity down", query: "code=c&state=s", err: grpcx.StatusOf(fault.Unavailable(0, "down")).Err(), status: http.StatusServiceUnavailable, message: msgUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, fake, logs := newProviderPage()
			fake.finishErr = tc.err
			var cookies []*http.Cookie
			if !tc.noFlow {
				cookies = append(cookies, &http.Cookie{Name: flowCookie, Value: "sealed-flow"})
			}
			rec := serve(t, p, http.MethodGet, ProviderCallbackPath+"?"+tc.query, cookies...)
			want := webpage.NewCard(httptest.NewRequest(http.MethodGet, "/", nil), "login.error.title", tc.message).T(tc.message)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), want) || !strings.Contains(rec.Body.String(), "req-idp") {
				t.Errorf("callback = %d, want %d and the card %q with its reference:\n%s", rec.Code, tc.status, tc.message, rec.Body.String())
			}
			// A failure of Berth's own is logged through webpage.LogFailure, whose request id
			// pkg/logx adds from the context; a refusal's line names it itself.
			if tc.status < 500 && !strings.Contains(logs.String(), "req-idp") {
				t.Errorf("no log line carries the reference: %s", logs.String())
			}
			if tc.err != nil && tc.status < 500 && !strings.Contains(logs.String(), "idpA said why") {
				t.Errorf("the log does not say why: %s", logs.String())
			}
		})
	}
}

// confirmForm posts form to the link confirmation with the CSRF cookie.
func confirmForm(t *testing.T, p *Page, form url.Values, cookie string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, ProviderLinkPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: cookie})
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec
}

// linkPage runs the callback of an existing account and returns the confirmation page.
func linkPage(t *testing.T, p *Page, fake *fakeProviders) *httptest.ResponseRecorder {
	t.Helper()
	fake.outcome = &identityv1.ProviderOutcome{Link: "sealed-link", Email: "ada@example.com", ProviderName: "Provider A",
		Params: &identityv1.LoginParams{ClientId: appID, RedirectUri: redirectURI, State: "st4te", Nonce: "n0nce"}}
	rec := serve(t, p, http.MethodGet, ProviderCallbackPath+"?code=c&state=s", &http.Cookie{Name: flowCookie, Value: "sealed-flow"})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "ada@example.com") {
		t.Fatalf("callback of an existing account = %d:\n%s", rec.Code, rec.Body.String())
	}
	return rec
}

var formByID = regexp.MustCompile(`(?s)<form [^>]*id="([a-z-]+)".*?</form>`)

// pageForms are the hidden fields of each form of a page by the form's id.
func pageForms(t *testing.T, body string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, m := range formByID.FindAllStringSubmatch(body, -1) {
		out[m[1]] = hiddenFields(t, m[0])
	}
	return out
}

func TestALinkIsConfirmedWithThePasswordBehindTheCSRFCheck(t *testing.T) {
	p, fake, _ := newProviderPage()
	rec := linkPage(t, p, fake)
	forms := pageForms(t, rec.Body.String())
	fields := forms["by-password"]
	if fields["link"] != "sealed-link" || fields["method"] != "password" {
		t.Fatalf("confirmation forms = %v", forms)
	}
	if _, ok := forms["by-code"]; ok {
		t.Error("an account without an authenticator app is offered its code")
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "https://app.example.com") {
		t.Errorf("CSP %q does not let the form's redirect reach the app", csp)
	}
	form := url.Values{}
	for k, v := range fields {
		form.Set(k, v)
	}
	form.Set("password", password)
	if rec := confirmForm(t, p, form, "not-the-token"); rec.Code != http.StatusForbidden || len(fake.confirms) != 0 {
		t.Errorf("confirmation without the CSRF cookie = %d, %d calls; want 403 and none", rec.Code, len(fake.confirms))
	}
	fake.confirmErr = grpcx.StatusOf(fault.Invalid("", "invalid email or password")).Err()
	if rec := confirmForm(t, p, form, fields[webpage.CSRFField]); rec.Code != http.StatusBadRequest || pageForms(t, rec.Body.String())["by-password"]["link"] != "sealed-link" {
		t.Errorf("a wrong password = %d, want 400 and the form again", rec.Code)
	}
	fake.confirmErr = nil
	rec = confirmForm(t, p, form, fields[webpage.CSRFField])
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), redirectURI+"?") {
		t.Errorf("confirmation = %d to %q, want 303 to the app", rec.Code, rec.Header().Get("Location"))
	}
	if got := fake.confirms[len(fake.confirms)-1]; got.GetLink() != "sealed-link" || got.GetPassword() != password || got.GetCode() != "" || got.GetEmailCode() != "" {
		t.Errorf("ConfirmProviderLink got %v", got)
	}
}

// A password-less account is offered the mailed code alone: "Email me a code" mails it and shows
// the page again bound to it, with the code form; the code confirms the link, and only the
// posted method's proof reaches identity.
func TestALinkIsConfirmedWithAMailedCodeWhenTheAccountHasNoPassword(t *testing.T) {
	p, fake, _ := newProviderPage()
	fake.proofs.Password = false
	forms := pageForms(t, linkPage(t, p, fake).Body.String())
	if _, ok := forms["by-password"]; ok {
		t.Error("a password-less account is asked for its password")
	}
	if _, ok := forms["by-email"]; ok {
		t.Error("the code form shows before a code was sent")
	}
	send := url.Values{}
	for k, v := range forms["send-code"] {
		send.Set(k, v)
	}
	rec := confirmForm(t, p, send, send.Get(webpage.CSRFField))
	if rec.Code != http.StatusOK || len(fake.sends) != 1 || fake.sends[0].GetLink() != "sealed-link" || fake.sends[0].GetClientIp() == "" {
		t.Fatalf("send = %d, SendProviderLinkCode got %v", rec.Code, fake.sends)
	}
	byEmail := pageForms(t, rec.Body.String())["by-email"]
	if byEmail["link"] != "bound-link" || byEmail["method"] != "email" || !strings.Contains(rec.Body.String(), `role="status"`) {
		t.Fatalf("the page after the mail: forms %v", pageForms(t, rec.Body.String()))
	}
	code := url.Values{}
	for k, v := range byEmail {
		code.Set(k, v)
	}
	code.Set("email_code", " 123456 ")
	code.Set("password", "posted but not this form's")
	fake.confirmErr = grpcx.StatusOf(fault.Invalid("emailCode", "this code is not correct or no longer valid")).Err()
	rec = confirmForm(t, p, code, code.Get(webpage.CSRFField))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "This code is not correct or no longer valid") {
		t.Errorf("a wrong code = %d:\n%s", rec.Code, rec.Body.String())
	}
	fake.confirmErr = nil
	rec = confirmForm(t, p, code, code.Get(webpage.CSRFField))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("the code = %d, want 303 to the app", rec.Code)
	}
	if got := fake.confirms[len(fake.confirms)-1]; got.GetLink() != "bound-link" || got.GetEmailCode() != "123456" || got.GetPassword() != "" {
		t.Errorf("ConfirmProviderLink got %v", got)
	}
	fake.sendErr = grpcx.StatusOf(fault.Exhausted(time.Hour, "too many")).Err()
	if rec := confirmForm(t, p, send, send.Get(webpage.CSRFField)); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a send over the limit = %d (Retry-After %q), want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
}

// An account with an authenticator app or a passkey is offered them too; a link that expired
// meanwhile ends on the error card.
func TestALinkOffersTheAccountsSecondFactorsAndAnExpiredLinkEndsOnTheCard(t *testing.T) {
	p, fake, _ := newProviderPage()
	fake.proofs.Totp = true
	fake.proofs.Passkey = &identityv1.PasskeyCeremony{Options: `{"challenge":"Y2hhbGxlbmdl"}`, State: "link-state"}
	rec := linkPage(t, p, fake)
	forms := pageForms(t, rec.Body.String())
	if forms["by-code"]["method"] != "code" || forms["passkey-form"]["passkey_state"] != "link-state" || forms["passkey-form"]["method"] != "passkey" {
		t.Fatalf("forms = %v, want the authenticator's code and the passkey", forms)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "'nonce-") {
		t.Errorf("CSP %q does not let the passkey's script run", csp)
	}
	form := url.Values{}
	for k, v := range forms["by-code"] {
		form.Set(k, v)
	}
	form.Set("code", "654321")
	if rec := confirmForm(t, p, form, form.Get(webpage.CSRFField)); rec.Code != http.StatusSeeOther || fake.confirms[0].GetCode() != "654321" {
		t.Errorf("the authenticator's code = %d, sent %v", rec.Code, fake.confirms)
	}
	fake.describeLinkErr = grpcx.StatusOf(fault.InvalidField("provider", "expired").WithReason("link")).Err()
	if rec := confirmForm(t, p, form, form.Get(webpage.CSRFField)); rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), `id="by-code"`) {
		t.Errorf("an expired link = %d:\n%s", rec.Code, rec.Body.String())
	}
	if len(fake.confirms) != 1 {
		t.Errorf("an expired link reached ConfirmProviderLink: %v", fake.confirms)
	}
}
