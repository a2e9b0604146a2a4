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
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// VerifyPath is the page of email verification: the link of a verification mail opens it (GET
// shows a button, POST confirms), and the "check your inbox" page posts its code and resend forms
// to it. It is under Path, so the CSRF cookie scoped to Path reaches it.
const VerifyPath = Path + "/verify"

// Serves reports whether path is one of the page's paths.
func Serves(path string) bool {
	return path == Path || path == VerifyPath || path == ProviderPath || path == ProviderCallbackPath || path == ProviderLinkPath ||
		path == SecondFactorPath || path == PasskeyPath
}

//go:embed verify.html
var verifyHTML string

// The verify form's operations.
const (
	opCode   = "code"   // the code typed on the "check your inbox" page
	opResend = "resend" // a new mail for the address
	opLink   = "link"   // the confirmation button of a mail's link
)

// maxToken bounds a link's secret (43 characters of base64url when well formed).
const maxToken = 128

// verifyForm is a POST to VerifyPath: every field the three forms carry.
type verifyForm struct {
	Op           string
	Params       Params // code and resend forms
	Email        string // code and resend forms
	Verification string // code form
	Code         string // code form
	Token        string // link form
}

var errBadOp = errors.New("the verify form has no known op")

// verifyFormFrom reads and checks a POST to VerifyPath. Bad bytes and overlong values are the
// link's or form's fault, as for the sign-in form.
func verifyFormFrom(v url.Values) (verifyForm, error) {
	f := verifyForm{
		Op: v.Get("op"), Email: v.Get("email"), Verification: v.Get("verification"),
		Code: strings.TrimSpace(v.Get("code")), Token: strings.TrimSpace(v.Get("token")),
	}
	for _, s := range []string{f.Op, f.Verification, f.Code, f.Token} {
		if len(s) > maxToken {
			return verifyForm{}, errLongParam
		}
		if !text.Valid(s) {
			return verifyForm{}, errBadParam
		}
	}
	switch f.Op {
	case opLink:
		return f, nil
	case opCode, opResend:
		p, err := ParamsFrom(v)
		if err != nil {
			return verifyForm{}, err
		}
		if p.SignUp || p.Referral != "" {
			// The pending page never posts them; a form that does was made elsewhere.
			return verifyForm{}, errBadParam
		}
		f.Params = p
		return f, nil
	}
	return verifyForm{}, errBadOp
}

// pendingView is the "check your inbox" page: the form's view (app, branding, language, the
// request's parameters and the address) with the verification whose code it takes.
type pendingView struct {
	formView
	Verification string
}

func (v pendingView) Title() string { return v.T("verify.pending.title") }
func (pendingView) Action() string  { return VerifyPath }
func (v pendingView) Head() webpage.Head {
	return webpage.Head{Title: v.Title(), Brand: v.Brand, Printer: v.Printer}
}

// linkView is a verification page that a mail's link opens, or that ends a verification: the
// app's look when identity could name the app (the link's challenge knows it, the code form
// names it), else the neutral look; in the request's language, else the app's default.
type linkView struct {
	title string
	Token string
	CSRF  string
	// Continue is where a met verification leads ("" when nowhere).
	Continue string
	Brand    webpage.Brand
	locale.Printer
}

// newLinkView is the view of an app identity described, or of none when lc is nil.
func newLinkView(r *http.Request, title string, lc *identityv1.LoginContext) linkView {
	b := lc.GetBranding()
	return linkView{title: title, Brand: webpage.BrandOf(b), Printer: locale.For(webpage.Language(r, b.GetDefaultLanguage()))}
}

func (v linkView) Title() string { return v.T(v.title) }
func (linkView) Action() string  { return VerifyPath }
func (v linkView) Head() webpage.Head {
	return webpage.Head{Title: v.Title(), Brand: v.Brand, Printer: v.Printer}
}

// linkApp asks identity for the app of a verification link, for its look. A link identity does
// not take answers nil, the neutral look: the page then behaves as for any link, and the
// confirmation's answer says whether it worked.
func (p *Page) linkApp(r *http.Request, token string) *identityv1.LoginContext {
	lc, err := p.client.DescribeVerification(r.Context(), &identityv1.VerifyEmailLinkRequest{Token: token})
	if err != nil {
		if c := status.Code(err); c != codes.InvalidArgument && c != codes.NotFound {
			p.logCause(r, "describe the verification link's app", err)
		}
		return nil
	}
	return lc
}

// renderLink answers a link page, allowing the app's logo in the Content-Security-Policy.
func (p *Page) renderLink(w http.ResponseWriter, r *http.Request, status int, name string, view linkView) {
	webpage.SetSecurityHeaders(w.Header(), "", view.Brand.LogoSource())
	p.render(w, r, status, name, view)
}

// serveVerify answers GET (the mail's link: a confirmation button, so that mail scanners
// fetching the link confirm nothing) and POST (the three forms) on VerifyPath.
func (p *Page) serveVerify(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		token := r.URL.Query().Get("token")
		if token == "" || len(token) > maxToken || !text.Valid(token) {
			p.logRefusal(r, "the verification link has no usable token")
			p.renderError(w, r, http.StatusBadRequest, msgVerificationInvalid)
			return
		}
		view := newLinkView(r, "verify.confirm.title", p.linkApp(r, token))
		view.Token, view.CSRF = token, CSRF.Issue(w, r)
		p.renderLink(w, r, http.StatusOK, "confirm", view)
	case http.MethodPost:
		p.submitVerify(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.logRefusal(r, "method "+r.Method+" is not allowed")
		p.renderError(w, r, http.StatusMethodNotAllowed, msgBadRequest)
	}
}

func (p *Page) submitVerify(w http.ResponseWriter, r *http.Request) {
	values, ok := p.readForm(w, r)
	if !ok {
		return
	}
	f, err := verifyFormFrom(values)
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadRequest)
		return
	}
	view := pendingView{formView: formView{Params: f.Params, Email: f.Email}, Verification: f.Verification}
	if f.Op != opLink && !text.Valid(f.Email) {
		view.Email = text.Sanitize(view.Email)
		p.pending(w, r, view, failure{status: http.StatusBadRequest, message: msgBadEmail})
		return
	}
	if !CSRF.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		if f.Op == opLink {
			view := newLinkView(r, "verify.confirm.title", p.linkApp(r, f.Token))
			view.Token, view.CSRF = f.Token, CSRF.Issue(w, r)
			p.renderLink(w, r, http.StatusForbidden, "confirm", view)
			return
		}
		p.pending(w, r, view, failure{status: http.StatusForbidden, message: msgExpired})
		return
	}
	ip := ClientIP(r, p.trusted)
	switch f.Op {
	case opLink:
		// The app is asked first: once met, the link no longer names it.
		app := p.linkApp(r, f.Token)
		res, err := p.client.VerifyEmailLink(r.Context(), &identityv1.VerifyEmailLinkRequest{Token: f.Token, ClientIp: ip})
		if err != nil {
			p.failVerify(w, r, err)
			return
		}
		p.verified(w, r, res.GetUrl(), app)
	case opCode:
		res, err := p.client.VerifyEmailCode(r.Context(), &identityv1.VerifyEmailCodeRequest{
			ClientId: f.Params.ClientID, Verification: f.Verification, Code: f.Code, ClientIp: ip,
		})
		if err != nil {
			st := status.Convert(err)
			if st.Code() == codes.InvalidArgument {
				p.logRefusal(r, "identity refused the code: "+st.Code().String()+fieldNote(st))
				p.pending(w, r, view, failure{status: http.StatusBadRequest, message: msgCodeInvalid})
				return
			}
			p.failVerify(w, r, err)
			return
		}
		// The form names the app; a describe that fails now leaves the neutral look.
		app, err := p.describe(r, f.Params)
		if err != nil {
			app = nil
		}
		p.verified(w, r, res.GetUrl(), app)
	case opResend:
		res, err := p.client.ResendVerification(r.Context(), &identityv1.ResendVerificationRequest{
			Params: f.Params.Proto(), Email: f.Email, ClientIp: ip,
		})
		if err != nil {
			st := status.Convert(err)
			p.logRefusal(r, "identity refused the resend: "+st.Code().String()+fieldNote(st))
			p.pending(w, r, view, submitFailure(err, false))
			return
		}
		view.Verification, view.Message = res.GetVerification(), msgResent
		p.pending(w, r, view, failure{status: http.StatusOK})
	}
}

// pending renders the "check your inbox" page for the request's app, asked of the backend again
// rather than trusted from the form.
func (p *Page) pending(w http.ResponseWriter, r *http.Request, view pendingView, f failure) {
	lc, err := p.describe(r, view.Params)
	if err != nil {
		p.failDescribe(w, r, err)
		return
	}
	view.describe(r, lc)
	if f.message != "" {
		view.Message = f.message
	}
	SetRetryAfter(w.Header(), f.retryAfter)
	view.CSRF = CSRF.Issue(w, r)
	webpage.SetSecurityHeaders(w.Header(), RedirectSource(view.Params.RedirectURI), view.Brand.LogoSource())
	p.render(w, r, f.status, "pending", view)
}

// verified ends a met verification. A verification that continues an authorization request
// leads to the app's redirect URI with a code; the page reaches it through a link (and a refresh
// that follows it at once) rather than a 303, because the form of a mail's link cannot know the
// app's origin to allow it in form-action beforehand.
func (p *Page) verified(w http.ResponseWriter, r *http.Request, target string, app *identityv1.LoginContext) {
	if target != "" {
		u, err := url.Parse(target)
		if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") {
			p.logCause(r, "verification redirect is not an absolute URL", errors.New("unusable redirect URL"))
			p.renderError(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
		target = u.String()
	}
	view := newLinkView(r, "verify.done.title", app)
	view.Continue = target
	p.renderLink(w, r, http.StatusOK, "verified", view)
}

// failVerify answers a failed verification call with the error card: every refusal gets the one
// text, whatever made the link or code unusable.
func (p *Page) failVerify(w http.ResponseWriter, r *http.Request, err error) {
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		p.logRefusal(r, "identity refused the verification: "+st.Code().String()+fieldNote(st))
		p.renderError(w, r, http.StatusBadRequest, msgVerificationInvalid)
	default:
		p.failCard(w, r, "verification", err)
	}
}

// failCard answers a failed call of a step after the sign-in form (what names it in the log) with
// the error card its code calls for: a limit, a backend down, an account that cannot sign in.
func (p *Page) failCard(w http.ResponseWriter, r *http.Request, what string, err error) {
	f := submitFailure(err, false)
	if f.status >= http.StatusInternalServerError {
		p.logCause(r, what+" failed", err)
	} else {
		st := status.Convert(err)
		p.logRefusal(r, "identity refused the "+what+": "+st.Code().String()+fieldNote(st))
	}
	SetRetryAfter(w.Header(), f.retryAfter)
	p.renderError(w, r, f.status, f.message)
}
