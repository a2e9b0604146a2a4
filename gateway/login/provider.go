package login

import (
	_ "embed"
	"errors"
	"net/http"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// The pages of a sign-in through one of the app's identity providers (idpA…idpD), all under Path
// so that the CSRF cookie reaches the link confirmation. ProviderPath (GET, the "Continue with …"
// link) starts the flow and sends the browser to the provider; the provider sends it back to
// ProviderCallbackPath, which identity registers as every slot's redirect URI; ProviderLinkPath
// takes the confirmation form of a link to an existing account.
const (
	ProviderPath         = Path + "/idp"
	ProviderCallbackPath = ProviderPath + "/callback"
	ProviderLinkPath     = ProviderPath + "/link"
)

// flowCookie keeps the sealed flow (identity's, opaque here) from the start to the callback. It is
// SameSite=Lax, unlike the CSRF cookie: the callback is a top-level navigation the provider's
// site starts, and a Strict cookie would not come with it. Lax still keeps it from any request
// another site sends with a body or from a frame, and the flow holds nothing but what binds the
// callback to this browser's request (identity checks the state against it).
const flowCookie = "berth_idp_flow"

// flowMaxAge is the cookie's life, identity's flow lifetime (its sealed expiry decides).
const flowMaxAge = 600

// maxSealed bounds the sealed values (flow, pending link) the pages pass through: a flow holds the
// authorization request's parameters, each at most maxParam.
const maxSealed = 16 << 10

//go:embed provider.html
var providerHTML string

// providerMessages are the texts of refused provider sign-ins by identity's reason (app.ProviderReason*).
var providerMessages = map[string]failure{
	"state":      {status: http.StatusBadRequest, message: "login.error.idp.state"},
	"denied":     {status: http.StatusBadRequest, message: "login.error.idp.denied"},
	"error":      {status: http.StatusBadRequest, message: "login.error.idp.failed"},
	"code":       {status: http.StatusBadRequest, message: "login.error.idp.failed"},
	"token":      {status: http.StatusBadRequest, message: "login.error.idp.failed"},
	"slot":       {status: http.StatusBadRequest, message: "login.error.idp.failed"},
	"email":      {status: http.StatusBadRequest, message: "login.error.idp.email"},
	"domain":     {status: http.StatusForbidden, message: "login.error.idp.domain"},
	"taken":      {status: http.StatusForbidden, message: "login.error.idp.taken"},
	"unverified": {status: http.StatusForbidden, message: "login.error.idp.unverified"},
	"link":       {status: http.StatusBadRequest, message: "login.error.idp.link"},
	"linked":     {status: http.StatusConflict, message: "login.error.idp.linked"},
	// An unreachable provider is not the edge's failure: the card says to try again, and the
	// status stays below 500 so that monitoring of Berth does not page for someone else's outage.
	"unreachable": {status: http.StatusBadRequest, message: "login.error.idp.unreachable"},
}

// providerFailure maps a failed provider call: identity's provider refusals by reason, the rest as
// the sign-in form's failures.
func providerFailure(err error) failure {
	st := status.Convert(err)
	if st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "provider" {
		if f, ok := providerMessages[grpcx.ReasonOf(st)]; ok {
			return f
		}
	}
	if st.Code() == codes.InvalidArgument {
		return failure{status: http.StatusBadRequest, message: msgBadLink}
	}
	return submitFailure(err, false)
}

// serveProvider answers the provider pages; it reports whether path was one of them.
func (p *Page) serveProvider(w http.ResponseWriter, r *http.Request) bool {
	var want string
	var serve func(http.ResponseWriter, *http.Request)
	switch r.URL.Path {
	case ProviderPath:
		want, serve = http.MethodGet, p.startProvider
	case ProviderCallbackPath:
		want, serve = http.MethodGet, p.providerCallback
	case ProviderLinkPath:
		want, serve = http.MethodPost, p.confirmLink
	default:
		return false
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		p.logRefusal(r, "method "+r.Method+" is not allowed")
		p.renderError(w, r, http.StatusMethodNotAllowed, msgBadRequest)
		return true
	}
	serve(w, r)
	return true
}

// startProvider is the "Continue with …" link: identity checks the request and the slot and
// answers the provider's authorization URL with the sealed flow, which the cookie keeps.
func (p *Page) startProvider(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	params, err := ParamsFrom(q)
	slot := q.Get("slot")
	if err == nil && (len(slot) > maxParam || !text.Valid(slot)) {
		err = errBadParam
	}
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadLink)
		return
	}
	start, err := p.client.StartProviderSignIn(r.Context(), &identityv1.StartProviderSignInRequest{
		Params: params.Proto(), Slot: slot,
	})
	if err != nil {
		p.failProvider(w, r, "start", err)
		return
	}
	if !StartProviderFlow(w, r, start) {
		p.logCause(r, "provider authorization URL is not an absolute http(s) URL", errors.New("unusable provider URL"))
		p.renderError(w, r, http.StatusInternalServerError, msgInternal)
	}
}

// StartProviderFlow keeps a provider flow identity started in the flow cookie and sends the
// browser to the provider's authorization URL. A link from the account page starts the same flow
// as a sign-in, and the same callback here finishes it; the flow says which it is. An answer that
// is not an absolute http(s) URL is false (nothing is written).
func StartProviderFlow(w http.ResponseWriter, r *http.Request, start *identityv1.ProviderRedirect) bool {
	target, err := url.Parse(start.GetUrl())
	if err != nil || !target.IsAbs() || (target.Scheme != "https" && target.Scheme != "http") {
		return false
	}
	setFlow(w, r, start.GetFlow(), flowMaxAge)
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
	return true
}

func setFlow(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: flowCookie, Value: value, Path: ProviderPath, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
}

// providerCallback is where the provider sends the browser back. The flow cookie is deleted
// whatever the outcome, so one flow serves one callback.
func (p *Page) providerCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := &identityv1.FinishProviderSignInRequest{
		State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), ErrorDescription: q.Get("error_description"),
		ClientIp: ClientIP(r, p.trusted), UserAgent: UserAgent(r),
	}
	if c, err := r.Cookie(flowCookie); err == nil {
		in.Flow = c.Value
	}
	setFlow(w, r, "", -1)
	for _, v := range []string{in.State, in.Code, in.Error, in.ErrorDescription} {
		if len(v) > maxParam || !text.Valid(v) {
			p.logRefusal(r, "a callback parameter is too long or breaks the text rule")
			p.renderError(w, r, http.StatusBadRequest, "login.error.idp.failed")
			return
		}
	}
	if in.Flow == "" || len(in.Flow) > maxSealed {
		p.logRefusal(r, "the provider callback came without the flow cookie")
		p.renderError(w, r, http.StatusBadRequest, "login.error.idp.state")
		return
	}
	out, err := p.client.FinishProviderSignIn(r.Context(), in)
	if err != nil {
		p.failProvider(w, r, "callback", err)
		return
	}
	if out.GetLink() != "" {
		p.renderProviderLink(w, r, providerLinkView{Link: out.GetLink()}, failure{status: http.StatusOK})
		return
	}
	if flow := out.GetSecondFactor(); flow != "" {
		// The provider was the first factor; the sign-in continues once the second is proved.
		p.askSecondFactor(w, r, secondFactorView{formView: formView{Params: paramsOf(out.GetParams())}, Flow: flow, Enrol: out.GetEnrol()}, failure{status: http.StatusOK})
		return
	}
	p.redirectTo(w, r, out.GetUrl())
}

// redirectTo sends the browser to the app's redirect URI that identity built.
func (p *Page) redirectTo(w http.ResponseWriter, r *http.Request, raw string) {
	target, err := url.Parse(raw)
	if err != nil || !target.IsAbs() {
		p.logCause(r, "login redirect is not an absolute URL", errors.New("unusable redirect URL"))
		p.renderError(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

// paramsOf is the page's view of the parameters identity sends back.
func paramsOf(lp *identityv1.LoginParams) Params {
	return Params{ClientID: lp.GetClientId(), RedirectURI: lp.GetRedirectUri(), State: lp.GetState(), Nonce: lp.GetNonce(),
		Scope: lp.GetScope(), Referral: lp.GetReferral()}
}

// confirmLink takes the confirmation page's forms: a proof that the account is the person's
// (its password, an authenticator code, the mailed code or a passkey) links the provider identity
// and continues the sign-in; "send" mails the code and shows the page again.
func (p *Page) confirmLink(w http.ResponseWriter, r *http.Request) {
	values, ok := p.readForm(w, r)
	if !ok {
		return
	}
	form, err := linkFormFrom(values)
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadRequest)
		return
	}
	view := providerLinkView{Link: form.Link}
	view.Params.Language = form.Language
	if !CSRF.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		p.renderProviderLink(w, r, view, failure{status: http.StatusForbidden, message: msgExpired})
		return
	}
	ip := ClientIP(r, p.trusted)
	if form.Method == linkSendCode {
		sent, err := p.client.SendProviderLinkCode(r.Context(), &identityv1.SendProviderLinkCodeRequest{Link: form.Link, ClientIp: ip})
		if err != nil {
			p.failLink(w, r, view, err)
			return
		}
		view.Link = sent.GetLink()
		p.renderProviderLink(w, r, view, failure{status: http.StatusOK})
		return
	}
	if form.Proof == "" {
		p.renderProviderLink(w, r, view, failure{status: http.StatusBadRequest, message: linkMissing[form.Method]})
		return
	}
	// The request's parameters come from the sealed link, never from the form: the second step
	// and the redirect continue the request the provider's flow started.
	proofs, err := p.client.DescribeProviderLink(r.Context(), &identityv1.ProviderLinkRef{Link: form.Link})
	if err != nil {
		p.failLink(w, r, view, err)
		return
	}
	in := &identityv1.ConfirmProviderLinkRequest{Link: form.Link, ClientIp: ip, UserAgent: UserAgent(r)}
	switch form.Method {
	case linkByPassword:
		in.Password = form.Proof
	case linkByCode:
		in.Code = form.Proof
	case linkByEmail:
		in.EmailCode = form.Proof
	case linkByPasskey:
		in.Passkey, in.PasskeyState = form.Proof, form.PasskeyState
	}
	out, err := p.client.ConfirmProviderLink(r.Context(), in)
	if err != nil {
		p.failLink(w, r, view, err)
		return
	}
	params := paramsOf(proofs.GetParams())
	params.Language = form.Language
	if flow := out.GetSecondFactor(); flow != "" {
		p.askSecondFactor(w, r, secondFactorView{formView: formView{Params: params}, Flow: flow, Enrol: out.GetEnrol()}, failure{status: http.StatusOK})
		return
	}
	p.redirectTo(w, r, out.GetUrl())
}

// linkMissing is the message of a confirmation form posted without its proof, by method.
var linkMissing = map[string]string{
	linkByPassword: msgMissingCredentials,
	linkByCode:     msgCodeWrong,
	linkByEmail:    msgLinkCodeWrong,
	linkByPasskey:  msgLinkPasskeyWrong,
}

// The confirmation page's own messages.
const (
	msgLinkCodeWrong    = "login.idp.link.wrongCode"
	msgLinkPasskeyWrong = "login.idp.link.passkeyFailed"
)

// linkProofMessages are the messages of a refused proof by the field identity names.
var linkProofMessages = map[string]string{
	"code":      msgCodeWrong,
	"emailCode": msgLinkCodeWrong,
	"passkey":   msgLinkPasskeyWrong,
}

// failLink answers a refused confirmation: a pending link that is broken, expired or linked
// already ends on the error card; a wrong proof, or a limit reached, shows the page again with
// its message.
func (p *Page) failLink(w http.ResponseWriter, r *http.Request, view providerLinkView, err error) {
	st := status.Convert(err)
	if st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "provider" {
		p.failProvider(w, r, "link", err)
		return
	}
	f := submitFailure(err, false)
	if msg, ok := linkProofMessages[grpcx.FieldOf(st)]; ok && st.Code() == codes.InvalidArgument {
		f = failure{status: http.StatusBadRequest, message: msg}
	}
	if f.status >= http.StatusInternalServerError {
		p.logCause(r, "provider link confirmation failed", err)
	} else {
		p.logRefusal(r, "identity refused the link confirmation: "+st.Code().String()+fieldNote(st))
	}
	p.renderProviderLink(w, r, view, f)
}

// failProvider answers a refused or failed provider step with the error card. The log line carries
// identity's message, which says why for the developer (the card shows a fixed text by reason).
func (p *Page) failProvider(w http.ResponseWriter, r *http.Request, step string, err error) {
	f := providerFailure(err)
	st := status.Convert(err)
	if f.status >= http.StatusInternalServerError {
		p.logCause(r, "provider sign-in "+step+" failed", err)
	} else {
		p.logRefusal(r, "provider sign-in "+step+" refused: "+st.Code().String()+fieldNote(st)+": "+st.Message())
	}
	SetRetryAfter(w.Header(), f.retryAfter)
	p.renderError(w, r, f.status, f.message)
}

// providerLinkView is the confirmation page of a link to an existing account: one form per
// proof the account offers, and the mailed code, which every account can receive.
type providerLinkView struct {
	formView
	Link, Email, ProviderName string
	// HasPassword and TOTP say which of the account's proofs the page offers besides the mailed
	// code (and the passkey, formView's Passkey); CodeSent that a mailed code waits for the link.
	HasPassword, TOTP, CodeSent bool
}

func (v providerLinkView) Action() string { return ProviderLinkPath }

// Head is the layout's view of the page.
func (v providerLinkView) Head() webpage.Head {
	return webpage.Head{Title: v.T("login.idp.link.title"), Brand: v.Brand, Printer: v.Printer}
}

// renderProviderLink shows the confirmation page of view's link as identity describes it (the
// account's address, the provider's name, the proofs), and the request's app: the page never
// shows a name the form made up. A link identity no longer accepts ends on the error card.
func (p *Page) renderProviderLink(w http.ResponseWriter, r *http.Request, view providerLinkView, f failure) {
	proofs, err := p.client.DescribeProviderLink(r.Context(), &identityv1.ProviderLinkRef{Link: view.Link})
	if err != nil {
		st := status.Convert(err)
		if st.Code() == codes.InvalidArgument {
			p.failProvider(w, r, "link", err)
			return
		}
		p.failCard(w, r, "describe the link confirmation", err)
		return
	}
	language := view.Params.Language
	view.Params = paramsOf(proofs.GetParams())
	view.Params.Language = language
	lc, err := p.describe(r, view.Params)
	if err != nil {
		p.failDescribe(w, r, err)
		return
	}
	view.describe(r, lc)
	view.Message = f.message
	view.Email, view.ProviderName = proofs.GetEmail(), proofs.GetProviderName()
	view.HasPassword, view.TOTP, view.CodeSent = proofs.GetPassword(), proofs.GetTotp(), proofs.GetCodeSent()
	if pk := proofs.GetPasskey(); pk.GetOptions() != "" {
		view.Passkey = webpage.Passkey{Options: pk.GetOptions(), State: pk.GetState(), Nonce: webpage.NewToken()}
	}
	view.CSRF = CSRF.Issue(w, r)
	SetRetryAfter(w.Header(), f.retryAfter)
	webpage.SetSecurityHeaders(w.Header(), RedirectSource(view.Params.RedirectURI), view.Brand.LogoSource())
	if view.Passkey.Nonce != "" {
		webpage.AllowScript(w.Header(), view.Passkey.Nonce)
	}
	p.render(w, r, f.status, "providerLink", view)
}

// ProviderURL is the "Continue with …" link of slot, carrying the authorization request.
func (p Params) ProviderURL(slot string) string {
	q := p.Query()
	q.Set("slot", slot)
	return ProviderPath + "?" + q.Encode()
}
