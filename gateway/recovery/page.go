package recovery

import (
	"cmp"
	_ "embed"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Path is where the pages are served; the reset mail links here with ?token=.
const Path = login.RecoverPath

// Bounds of the typed and carried values. An address is at most 320 characters; codes, flow ids
// and link secrets are far below maxSecret, which only keeps hostile values out of the calls.
const (
	maxEmail  = 320
	maxSecret = 256
)

// The forms, named by the step field they post (and the template that renders them).
const (
	stepEmail    = "email"
	stepCode     = "code"
	stepPassword = "password"
)

// The pages' messages: keys of pkg/locale's catalog, fixed texts chosen by outcome, never the
// backend's, so that nothing tells a visitor whether an address has an account.
const (
	msgTitle       = "recover.error.title"
	msgBadLink     = "recover.error.badLink"
	msgBadRequest  = "login.error.badRequest"
	msgInternal    = "page.error.internal"
	msgUnavailable = "page.error.unavailable"
	msgExpired     = "login.error.expired"
	msgBadEmail    = "login.error.badEmail"
	msgTooMany     = "recover.error.tooMany"
	// msgSpent answers a wrong, spent, retired, expired and unknown link or code alike.
	msgSpent          = "recover.error.spent"
	msgMissingCode    = "recover.error.missingCode"
	msgBadPasswordUse = "login.error.badPasswordCharacters"
	msgForbidden      = "login.error.forbidden"
)

//go:embed page.html
var pageHTML string

var pages = webpage.Template("recovery", pageHTML)

// Page serves the password-reset pages. It holds no state between requests: the authorization
// request, the flow and the proof travel in the forms, the CSRF token in the sign-in page's cookie.
type Page struct {
	client  identityv1.LoginServiceClient
	log     *slog.Logger
	trusted []netip.Prefix
}

// New returns the pages backed by identity's LoginService; log and trusted are as for login.New.
func New(client identityv1.LoginServiceClient, log *slog.Logger, trusted []netip.Prefix) *Page {
	return &Page{client: client, log: log, trusted: trusted}
}

// view is what a form shows. Every value is escaped by html/template.
type view struct {
	step    string
	Params  login.Params // Language alone on the mail link's path
	AppName string       // the app's display name, else its name
	Brand   webpage.Brand
	Email   string // the address typed, repeated on the code form
	Flow    string // the flow whose code the code form asks for
	Code    string // a checked code, carried to the new-password form
	Token   string // the mail link's secret, carried to the new-password form
	Message string // a catalog key
	CSRF    string
	// target is the redirect URI the new-password form's post goes on to (its CSP allows it).
	target string
	// Printer speaks the page's language.
	locale.Printer
}

// describe takes what identity said about the app: its name, branding and default language, which
// decides the page's language when neither the link nor the browser does.
func (v *view) describe(r *http.Request, name string, b *identityv1.AppBranding) {
	v.AppName = cmp.Or(b.GetDisplayName(), name)
	v.Brand = webpage.BrandOf(b)
	v.Printer = locale.For(webpage.Language(r, b.GetDefaultLanguage()))
}

// Head is the layout's view of the page.
func (v view) Head() webpage.Head {
	title := map[string]string{stepEmail: "recover.title", stepCode: "recover.sent.title", stepPassword: "recover.password.title"}[v.step]
	return webpage.Head{Title: v.T(title), Brand: v.Brand, Printer: v.Printer}
}

func (v view) Action() string     { return Path }
func (v view) RecoverURL() string { return v.Params.RecoverURL() }
func (v view) SignInURL() string  { return login.Path + "?" + v.Params.Query().Encode() }

// failure is how a page answers a failed call: status, message, and the Retry-After wait.
type failure struct {
	status     int
	message    string
	retryAfter time.Duration
}

// ServeHTTP answers GET (show a form) and POST (submit one) on Path.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	switch r.Method {
	case http.MethodGet:
		p.show(w, r)
	case http.MethodPost:
		p.submit(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.logRefusal(r, "method "+r.Method+" is not allowed")
		p.renderError(w, r, failure{status: http.StatusMethodNotAllowed, message: msgBadRequest})
	}
}

// show renders the new-password form for a mail link (?token=) and the email form for a link
// from the sign-in page. Neither changes anything.
func (p *Page) show(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Has("token") {
		token := q.Get("token")
		if !carried(token) {
			p.logRefusal(r, "the token breaks the text rule or is too long")
			p.renderError(w, r, failure{status: http.StatusBadRequest, message: msgSpent})
			return
		}
		p.askPassword(w, r, view{Token: token, Params: login.Params{Language: locale.Requested(q)}}, http.StatusOK, "")
		return
	}
	params, err := login.ParamsFrom(q)
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, failure{status: http.StatusBadRequest, message: msgBadLink})
		return
	}
	p.renderStep(w, r, view{step: stepEmail, Params: params}, failure{status: http.StatusOK})
}

// submit checks the posted form and runs its step.
func (p *Page) submit(w http.ResponseWriter, r *http.Request) {
	form, refused, reason := login.ReadForm(w, r)
	if refused != 0 {
		p.logRefusal(r, reason)
		p.renderError(w, r, failure{status: refused, message: msgBadRequest})
		return
	}
	v := view{step: form.Get("step"), Token: form.Get("token"), Flow: form.Get("flow"), Code: form.Get("code"), Email: form.Get("email")}
	if v.step == stepPassword && v.Token != "" {
		v.Params.Language = locale.Requested(form)
		if !carried(v.Token) {
			p.logRefusal(r, "the token breaks the text rule or is too long")
			p.renderError(w, r, failure{status: http.StatusBadRequest, message: msgSpent})
			return
		}
	} else {
		params, err := login.ParamsFrom(form)
		if err != nil {
			p.logRefusal(r, err.Error())
			p.renderError(w, r, failure{status: http.StatusBadRequest, message: msgBadLink})
			return
		}
		v.Params = params
	}
	if !text.Valid(v.Email) || len(v.Email) > maxEmail {
		v.Email = ""
		v.step = stepEmail
		p.renderStep(w, r, v, failure{status: http.StatusBadRequest, message: msgBadEmail})
		return
	}
	if !carried(v.Flow) || !carried(v.Code) {
		p.logRefusal(r, "the flow or code breaks the text rule or is too long")
		v.Code = ""
		p.renderStep(w, r, v, failure{status: http.StatusBadRequest, message: msgSpent})
		return
	}
	if !login.CSRF.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		p.renderStep(w, r, v, failure{status: http.StatusForbidden, message: msgExpired})
		return
	}
	switch v.step {
	case stepEmail:
		p.start(w, r, v)
	case stepCode:
		p.checkCode(w, r, v)
	case stepPassword:
		p.complete(w, r, v, form.Get("password"))
	default:
		p.logRefusal(r, "unknown step")
		p.renderError(w, r, failure{status: http.StatusBadRequest, message: msgBadRequest})
	}
}

// carried reports whether a value the pages carry (token, flow, code) may be sent to identity.
func carried(s string) bool { return len(s) <= maxSecret && text.Valid(s) }

// start asks for the mail and answers the code form, the same for every address.
func (p *Page) start(w http.ResponseWriter, r *http.Request, v view) {
	if strings.TrimSpace(v.Email) == "" {
		p.renderStep(w, r, v, failure{status: http.StatusBadRequest, message: msgBadEmail})
		return
	}
	flow, err := p.client.StartPasswordReset(r.Context(), &identityv1.StartPasswordResetRequest{
		Params: v.Params.Proto(), Email: v.Email, ClientIp: login.ClientIP(r, p.trusted),
	})
	if err != nil {
		f := p.failed(r, "start", err)
		p.renderStep(w, r, v, f)
		return
	}
	v.step, v.Flow = stepCode, flow.GetFlowId()
	p.renderStep(w, r, v, failure{status: http.StatusOK})
}

// checkCode checks the typed code and answers the new-password form, or the code form again.
func (p *Page) checkCode(w http.ResponseWriter, r *http.Request, v view) {
	v.Code = strings.TrimSpace(v.Code)
	if v.Code == "" {
		p.renderStep(w, r, v, failure{status: http.StatusBadRequest, message: msgMissingCode})
		return
	}
	p.askPassword(w, r, v, http.StatusOK, "")
}

// askPassword checks the view's proof (link or flow and code) and renders the new-password form
// with message, or the refusal.
func (p *Page) askPassword(w http.ResponseWriter, r *http.Request, v view, status int, message string) {
	rc, err := p.client.CheckPasswordReset(r.Context(), &identityv1.CheckPasswordResetRequest{Proof: proofOf(v)})
	if err != nil {
		f := p.failed(r, "check", err)
		if v.Token != "" || f.status != http.StatusBadRequest {
			p.renderError(w, r, f)
			return
		}
		v.step, v.Code = stepCode, ""
		p.renderStep(w, r, v, f)
		return
	}
	v.describe(r, rc.GetAppName(), rc.GetBranding())
	v.step, v.target, v.Message = stepPassword, rc.GetRedirectUri(), message
	p.render(w, r, status, v)
}

// complete sets the new password and sends the browser on to the app.
func (p *Page) complete(w http.ResponseWriter, r *http.Request, v view, password string) {
	if !text.Valid(password) {
		p.askPassword(w, r, v, http.StatusBadRequest, msgBadPasswordUse)
		return
	}
	redirect, err := p.client.CompletePasswordReset(r.Context(), &identityv1.CompletePasswordResetRequest{
		Proof: proofOf(v), Password: password, ClientIp: login.ClientIP(r, p.trusted), UserAgent: login.UserAgent(r),
	})
	if err != nil {
		st := status.Convert(err)
		if st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "password" {
			p.askPassword(w, r, v, http.StatusBadRequest, login.PasswordRuleMessage(grpcx.ReasonOf(st)))
			return
		}
		p.renderError(w, r, p.failed(r, "completion", err))
		return
	}
	target, err := url.Parse(redirect.GetUrl())
	if err != nil || !target.IsAbs() {
		// Identity builds this URL; following a relative or broken one would land the browser on
		// the edge instead of the app.
		p.logCause(r, "reset redirect is not an absolute URL", errors.New("unusable redirect URL"))
		p.renderError(w, r, failure{status: http.StatusInternalServerError, message: msgInternal})
		return
	}
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

func proofOf(v view) *identityv1.PasswordResetProof {
	if v.Token != "" {
		return &identityv1.PasswordResetProof{Link: v.Token}
	}
	return &identityv1.PasswordResetProof{ClientId: v.Params.ClientID, FlowId: v.Flow, Code: v.Code}
}

// failed maps a failed call to the page's answer and logs it: a refusal at info with its code and
// field (the backend's text may name the address), anything else as an error.
func (p *Page) failed(r *http.Request, what string, err error) failure {
	st := status.Convert(err)
	var f failure
	switch st.Code() {
	case codes.InvalidArgument:
		switch grpcx.FieldOf(st) {
		case "email":
			f = failure{status: http.StatusBadRequest, message: msgBadEmail}
		case "client_id", "redirect_uri", "state", "nonce", "scope":
			f = failure{status: http.StatusBadRequest, message: msgBadLink}
		default:
			f = failure{status: http.StatusBadRequest, message: msgSpent}
		}
	case codes.NotFound, codes.FailedPrecondition:
		f = failure{status: http.StatusBadRequest, message: msgBadLink}
	case codes.PermissionDenied:
		f = failure{status: http.StatusForbidden, message: msgForbidden}
	case codes.ResourceExhausted:
		f = failure{status: http.StatusTooManyRequests, message: msgTooMany, retryAfter: grpcx.RetryAfterOf(st)}
	case codes.Unavailable:
		f = failure{status: http.StatusServiceUnavailable, message: msgUnavailable, retryAfter: grpcx.RetryAfterOf(st)}
	default:
		p.logCause(r, "password reset "+what+" failed", err)
		return failure{status: http.StatusInternalServerError, message: msgInternal}
	}
	note := ""
	if field := grpcx.FieldOf(st); field != "" {
		note = " (" + field + ")"
	}
	p.logRefusal(r, "identity refused the reset "+what+": "+st.Code().String()+note)
	return f
}

// renderStep renders the email or code form with f's status and message, asking identity for the
// app's name (never trusting a posted one). A link identity refuses gets the error card.
func (p *Page) renderStep(w http.ResponseWriter, r *http.Request, v view, f failure) {
	if v.step != stepCode && v.step != stepPassword {
		v.step = stepEmail
	}
	if v.step == stepPassword {
		// A refused new-password post is answered by askPassword; here only the CSRF and text
		// checks land, which re-ask for the proof's form.
		p.askPassword(w, r, v, f.status, f.message)
		return
	}
	lc, err := p.client.DescribeLogin(r.Context(), &identityv1.DescribeLoginRequest{ClientId: v.Params.ClientID, RedirectUri: v.Params.RedirectURI})
	if err != nil {
		p.renderError(w, r, p.failed(r, "link", err))
		return
	}
	v.describe(r, lc.GetAppName(), lc.GetBranding())
	v.Message = f.message
	login.SetRetryAfter(w.Header(), f.retryAfter)
	p.render(w, r, f.status, v)
}

// render executes the view's form with a CSRF token.
func (p *Page) render(w http.ResponseWriter, r *http.Request, status int, v view) {
	v.CSRF = login.CSRF.Issue(w, r)
	webpage.SetSecurityHeaders(w.Header(), login.RedirectSource(v.target), v.Brand.LogoSource())
	p.execute(w, r, status, v.step, v)
}

// renderError shows the error card.
func (p *Page) renderError(w http.ResponseWriter, r *http.Request, f failure) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	login.SetRetryAfter(w.Header(), f.retryAfter)
	p.execute(w, r, f.status, "card", webpage.NewCard(r, msgTitle, f.message))
}

// execute renders template name of the pages.
func (p *Page) execute(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	if err := webpage.Render(w, pages, status, name, data); err != nil {
		p.logCause(r, "render reset page", err)
	}
}

// logCause records why a request failed. Never pass anything holding a password, code or token.
func (p *Page) logCause(r *http.Request, msg string, err error) {
	webpage.LogFailure(p.log, r, msg, err)
}

// logRefusal records at info why the page refused a request, under the request id the error card
// shows.
func (p *Page) logRefusal(r *http.Request, reason string) {
	p.log.InfoContext(r.Context(), "password reset refused", slog.String("request_id", reqid.From(r.Context())), slog.String("reason", reason))
}
