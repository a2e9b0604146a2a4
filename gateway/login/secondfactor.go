package login

import (
	_ "embed"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// SecondFactorPath is the second step of a sign-in: the form that takes a TOTP or recovery code
// (and, when the app requires a factor the user lacks, enrols one first) posts to it. It is under
// Path, so the CSRF cookie scoped to Path reaches it.
const SecondFactorPath = Path + "/second-factor"

//go:embed secondfactor.html
var secondFactorHTML string

// The second step's messages.
const (
	msgCodeWrong    = "mfa.error.code"
	msgPasskeyWrong = "mfa.error.passkey"
	msgFlowExpired  = "mfa.error.flow"
)

// secondFactorForm is a POST to SecondFactorPath: the request's parameters (to name and brand the
// app again), the flow identity issued after the password, and the code or a passkey's assertion
// (JSON) with its ceremony's state.
type secondFactorForm struct {
	Params       Params
	Flow         string
	Enrol        bool
	Code         string
	Passkey      string
	PasskeyState string
}

// maxPasskey bounds a passkey's assertion (JSON of a few kilobytes) and its state.
const maxPasskey = 32 << 10

var errMissingFlow = errors.New("the second-step form has no flow")

// secondFactorFormFrom reads and checks a POST to SecondFactorPath.
func secondFactorFormFrom(v url.Values) (secondFactorForm, error) {
	p, err := ParamsFrom(v)
	if err != nil {
		return secondFactorForm{}, err
	}
	f := secondFactorForm{Params: p, Flow: strings.TrimSpace(v.Get("flow")), Enrol: v.Get("enrol") == "1", Code: strings.TrimSpace(v.Get("code"))}
	for _, s := range []string{f.Flow, f.Code, v.Get("enrol")} {
		if len(s) > maxToken {
			return secondFactorForm{}, errLongParam
		}
		if !text.Valid(s) {
			return secondFactorForm{}, errBadParam
		}
	}
	f.Passkey, f.PasskeyState = v.Get("passkey"), v.Get("passkey_state")
	for _, s := range []string{f.Passkey, f.PasskeyState} {
		if len(s) > maxPasskey {
			return secondFactorForm{}, errLongParam
		}
		if !text.Valid(s) {
			return secondFactorForm{}, errBadParam
		}
	}
	if f.Flow == "" {
		return secondFactorForm{}, errMissingFlow
	}
	return f, nil
}

// secondFactorView is the second step's page.
type secondFactorView struct {
	formView
	Flow  string
	Enrol bool
	// Key is the TOTP key being enrolled (Enrol only).
	Key webpage.TOTPKey
	// Passkey is the assertion the user's passkeys can answer, or for Enrol the creation of a
	// passkey instead of the TOTP key; zero when there is none to offer.
	Passkey webpage.Passkey
}

func (v secondFactorView) Title() string {
	if v.Enrol {
		return v.T("mfa.enrol.title")
	}
	return v.T("mfa.step.title")
}
func (secondFactorView) Action() string { return SecondFactorPath }
func (v secondFactorView) Head() webpage.Head {
	return webpage.Head{Title: v.Title(), Brand: v.Brand, Printer: v.Printer}
}

// recoveryView shows the recovery codes of an enrolment at sign-in, once, with the way on to the
// app.
type recoveryView struct {
	formView
	Codes    webpage.RecoveryCodes
	Continue string
}

func (v recoveryView) Head() webpage.Head {
	return webpage.Head{Title: v.T("mfa.recovery.title"), Brand: v.Brand, Printer: v.Printer}
}

// askSecondFactor renders the second step for the request's app, asked of the backend again
// rather than trusted from the form. An enrolling step shows the key to add to the authenticator.
func (p *Page) askSecondFactor(w http.ResponseWriter, r *http.Request, view secondFactorView, f failure) {
	lc, err := p.describe(r, view.Params)
	if err != nil {
		p.failDescribe(w, r, err)
		return
	}
	view.describe(r, lc)
	if f.message != "" {
		view.Message = f.message
	}
	if view.Enrol {
		key, err := p.client.StartSignInEnrolment(r.Context(), &identityv1.SecondFactorFlow{Flow: view.Flow})
		if err != nil {
			p.failSecondFactor(w, r, view, err)
			return
		}
		if view.Key, err = webpage.NewTOTPKey(key.GetOtpauthUrl(), key.GetSecret(), view.Printer); err != nil {
			p.logCause(r, "render the enrolment's QR code", err)
			p.renderError(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
		// A passkey is the other factor the user may enrol. Without one (no public URL for
		// WebAuthn, say) the authenticator app still works: the failure is logged, not shown.
		ceremony, err := p.client.StartSignInPasskeyEnrolment(r.Context(), &identityv1.SecondFactorFlow{Flow: view.Flow})
		if err != nil {
			p.logCause(r, "start a passkey enrolment at sign-in", err)
		} else if ceremony.GetOptions() != "" {
			view.Passkey = webpage.Passkey{Options: ceremony.GetOptions(), State: ceremony.GetState(), Nonce: webpage.NewToken()}
		}
	}
	if !view.Enrol {
		ceremony, err := p.client.StartPasskeyAssertion(r.Context(), &identityv1.SecondFactorFlow{Flow: view.Flow})
		if err != nil {
			p.failSecondFactor(w, r, view, err)
			return
		}
		if ceremony.GetOptions() != "" {
			view.Passkey = webpage.Passkey{Options: ceremony.GetOptions(), State: ceremony.GetState(), Nonce: webpage.NewToken()}
		}
	}
	SetRetryAfter(w.Header(), f.retryAfter)
	view.CSRF = CSRF.Issue(w, r)
	webpage.SetSecurityHeaders(w.Header(), RedirectSource(view.Params.RedirectURI), view.Brand.LogoSource())
	if view.Passkey.Nonce != "" {
		webpage.AllowScript(w.Header(), view.Passkey.Nonce)
	}
	p.render(w, r, f.status, "secondFactor", view)
}

// postedForm is readForm for the paths that take only a POST; when it reports false it has
// answered.
func (p *Page) postedForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		p.logRefusal(r, "method "+r.Method+" is not allowed")
		p.renderError(w, r, http.StatusMethodNotAllowed, msgBadRequest)
		return nil, false
	}
	return p.readForm(w, r)
}

// submitSecondFactor checks the second step's code and continues to the app.
func (p *Page) submitSecondFactor(w http.ResponseWriter, r *http.Request) {
	values, ok := p.postedForm(w, r)
	if !ok {
		return
	}
	f, err := secondFactorFormFrom(values)
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadRequest)
		return
	}
	view := secondFactorView{formView: formView{Params: f.Params}, Flow: f.Flow, Enrol: f.Enrol}
	if !CSRF.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		p.askSecondFactor(w, r, view, failure{status: http.StatusForbidden, message: msgExpired})
		return
	}
	if f.Code == "" && f.Passkey == "" {
		p.askSecondFactor(w, r, view, failure{status: http.StatusBadRequest, message: msgCodeWrong})
		return
	}
	res, err := p.client.VerifySecondFactor(r.Context(), &identityv1.VerifySecondFactorRequest{
		Flow: f.Flow, Code: f.Code, Passkey: f.Passkey, PasskeyState: f.PasskeyState, ClientIp: ClientIP(r, p.trusted), UserAgent: UserAgent(r),
	})
	if err != nil {
		p.failSecondFactor(w, r, view, err)
		return
	}
	target, err := url.Parse(res.GetUrl())
	if err != nil || !target.IsAbs() {
		p.logCause(r, "second step redirect is not an absolute URL", errors.New("unusable redirect URL"))
		p.renderError(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if codes := res.GetRecoveryCodes(); len(codes) > 0 {
		// An enrolment at sign-in: its recovery codes are shown now or never.
		lc, err := p.describe(r, f.Params)
		if err != nil {
			p.failDescribe(w, r, err)
			return
		}
		rv := recoveryView{formView: formView{Params: f.Params}, Continue: target.String()}
		rv.describe(r, lc)
		rv.Codes = webpage.RecoveryCodes{Codes: codes, Printer: rv.Printer}
		webpage.SetSecurityHeaders(w.Header(), "", rv.Brand.LogoSource())
		p.render(w, r, http.StatusOK, "recoveryDone", rv)
		return
	}
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

// failSecondFactor answers a refused second step: a wrong code asks again; a flow that is spent
// or expired (or an app or user that can no longer sign in) ends on the error card, from where
// the user signs in anew.
func (p *Page) failSecondFactor(w http.ResponseWriter, r *http.Request, view secondFactorView, err error) {
	st := status.Convert(err)
	switch {
	case st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "code":
		p.logRefusal(r, "identity refused the second factor's code")
		p.askSecondFactor(w, r, view, failure{status: http.StatusBadRequest, message: msgCodeWrong})
	case st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "passkey":
		p.logRefusal(r, "identity refused the passkey")
		p.askSecondFactor(w, r, view, failure{status: http.StatusBadRequest, message: msgPasskeyWrong})
	case st.Code() == codes.InvalidArgument:
		p.logRefusal(r, "identity refused the second step: "+st.Code().String()+fieldNote(st))
		p.renderError(w, r, http.StatusBadRequest, msgFlowExpired)
	default:
		p.failCard(w, r, "second step", err)
	}
}
