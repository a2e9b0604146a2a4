package login

import (
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

// PasskeyPath is where the sign-in form's "Sign in with a passkey" posts the browser's assertion.
// It is under Path, so the CSRF cookie scoped to Path reaches it.
const PasskeyPath = Path + "/passkey"

// PasskeyAction is where the sign-in form's passkey posts.
func (formView) PasskeyAction() string { return PasskeyPath }

// offerPasskey adds the passkey sign-in to a sign-in form of an app that offers it. A failure to
// start the ceremony leaves the form without it (the password still works) and is logged.
func (p *Page) offerPasskey(r *http.Request, view *formView, lc *identityv1.LoginContext) {
	if view.Params.SignUp || !lc.GetPasskeySignIn() {
		return
	}
	c, err := p.client.StartPasskeySignIn(r.Context(), &identityv1.DescribeLoginRequest{
		ClientId: view.Params.ClientID, RedirectUri: view.Params.RedirectURI,
	})
	if err != nil || c.GetOptions() == "" {
		if err != nil {
			p.logCause(r, "start a passkey sign-in", err)
		}
		return
	}
	view.Passkey = webpage.Passkey{Options: c.GetOptions(), State: c.GetState(), Nonce: webpage.NewToken()}
}

// passkeyFormFrom reads a POST to PasskeyPath: the request's parameters and the assertion with its
// ceremony's state.
func passkeyFormFrom(v url.Values) (Params, string, string, error) {
	params, err := ParamsFrom(v)
	if err != nil {
		return Params{}, "", "", err
	}
	if params.SignUp {
		return Params{}, "", "", errBadParam // only the sign-in form offers it
	}
	assertion, state := v.Get("passkey"), v.Get("passkey_state")
	for _, s := range []string{assertion, state} {
		if s == "" {
			return Params{}, "", "", errMissingPasskey
		}
		if len(s) > maxPasskey {
			return Params{}, "", "", errLongParam
		}
		if !text.Valid(s) {
			return Params{}, "", "", errBadParam
		}
	}
	return params, assertion, state, nil
}

var errMissingPasskey = errors.New("the passkey form has no assertion or state")

// submitPasskey signs in with the browser's passkey and continues to the app, as the password
// form does.
func (p *Page) submitPasskey(w http.ResponseWriter, r *http.Request) {
	values, ok := p.postedForm(w, r)
	if !ok {
		return
	}
	params, assertion, state, err := passkeyFormFrom(values)
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadRequest)
		return
	}
	view := formView{Params: params}
	if !CSRF.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		p.retry(w, r, view, failure{status: http.StatusForbidden, message: msgExpired})
		return
	}
	redirect, err := p.client.PasskeySignIn(r.Context(), &identityv1.PasskeySignInRequest{
		Params: params.Proto(), Passkey: assertion, State: state, ClientIp: ClientIP(r, p.trusted), UserAgent: UserAgent(r),
	})
	if err != nil {
		st := status.Convert(err)
		f := submitFailure(err, false)
		if st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "passkey" {
			f = failure{status: http.StatusBadRequest, message: msgPasskeyWrong}
		}
		if f.status >= http.StatusInternalServerError {
			p.logCause(r, "passkey sign-in failed", err)
		} else {
			p.logRefusal(r, "identity refused the passkey sign-in: "+st.Code().String()+fieldNote(st))
		}
		p.retry(w, r, view, f)
		return
	}
	if v := redirect.GetVerification(); v != "" {
		p.pending(w, r, pendingView{formView: view, Verification: v}, failure{status: http.StatusOK})
		return
	}
	target, err := url.Parse(redirect.GetUrl())
	if err != nil || !target.IsAbs() {
		p.logCause(r, "passkey sign-in redirect is not an absolute URL", errors.New("unusable redirect URL"))
		p.renderError(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}
