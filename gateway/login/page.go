package login

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Path is where the page is served (the login_url of the authorization step).
const Path = "/login"

// RecoverPath is where the password-reset pages (gateway/recovery) are served: under Path, so that
// the CSRF cookie reaches them.
const RecoverPath = Path + "/recover"

// maxForm is the POST body limit: a form of a few short fields never comes near it.
const maxForm = 64 << 10

//go:embed page.html
var pageHTML string

var pages = webpage.Template("login", pageHTML+verifyHTML+providerHTML+secondFactorHTML)

// Backend is the part of identity's LoginService the sign-in and verification pages call; the
// service's other RPCs back other hosted pages.
type Backend interface {
	DescribeLogin(ctx context.Context, in *identityv1.DescribeLoginRequest, opts ...grpc.CallOption) (*identityv1.LoginContext, error)
	SignUp(ctx context.Context, in *identityv1.SignUpRequest, opts ...grpc.CallOption) (*identityv1.LoginRedirect, error)
	SignIn(ctx context.Context, in *identityv1.SignInRequest, opts ...grpc.CallOption) (*identityv1.LoginRedirect, error)
	VerifyEmailLink(ctx context.Context, in *identityv1.VerifyEmailLinkRequest, opts ...grpc.CallOption) (*identityv1.VerifiedEmail, error)
	VerifyEmailCode(ctx context.Context, in *identityv1.VerifyEmailCodeRequest, opts ...grpc.CallOption) (*identityv1.VerifiedEmail, error)
	ResendVerification(ctx context.Context, in *identityv1.ResendVerificationRequest, opts ...grpc.CallOption) (*identityv1.LoginRedirect, error)
	StartProviderSignIn(ctx context.Context, in *identityv1.StartProviderSignInRequest, opts ...grpc.CallOption) (*identityv1.ProviderRedirect, error)
	FinishProviderSignIn(ctx context.Context, in *identityv1.FinishProviderSignInRequest, opts ...grpc.CallOption) (*identityv1.ProviderOutcome, error)
	ConfirmProviderLink(ctx context.Context, in *identityv1.ConfirmProviderLinkRequest, opts ...grpc.CallOption) (*identityv1.LoginRedirect, error)
	DescribeProviderLink(ctx context.Context, in *identityv1.ProviderLinkRef, opts ...grpc.CallOption) (*identityv1.ProviderLinkProofs, error)
	SendProviderLinkCode(ctx context.Context, in *identityv1.SendProviderLinkCodeRequest, opts ...grpc.CallOption) (*identityv1.ProviderLinkRef, error)
	DescribeVerification(ctx context.Context, in *identityv1.VerifyEmailLinkRequest, opts ...grpc.CallOption) (*identityv1.LoginContext, error)
	StartSignInEnrolment(ctx context.Context, in *identityv1.SecondFactorFlow, opts ...grpc.CallOption) (*identityv1.TotpKey, error)
	StartSignInPasskeyEnrolment(ctx context.Context, in *identityv1.SecondFactorFlow, opts ...grpc.CallOption) (*identityv1.PasskeyCeremony, error)
	VerifySecondFactor(ctx context.Context, in *identityv1.VerifySecondFactorRequest, opts ...grpc.CallOption) (*identityv1.LoginRedirect, error)
	StartPasskeyAssertion(ctx context.Context, in *identityv1.SecondFactorFlow, opts ...grpc.CallOption) (*identityv1.PasskeyCeremony, error)
	StartPasskeySignIn(ctx context.Context, in *identityv1.DescribeLoginRequest, opts ...grpc.CallOption) (*identityv1.PasskeyCeremony, error)
	PasskeySignIn(ctx context.Context, in *identityv1.PasskeySignInRequest, opts ...grpc.CallOption) (*identityv1.LoginRedirect, error)
}

// Page is the hosted login page. It holds no state between requests: the authorization
// parameters travel in the form, the CSRF token in a cookie.
type Page struct {
	client  Backend
	log     *slog.Logger
	trusted []netip.Prefix
}

// New returns the page backed by the identity service's LoginService. log receives the causes of
// failures the page answers with a 500. trusted lists the reverse proxies (load balancers) in front
// of the edge whose X-Forwarded-For entries may name the end user; with none, the TCP peer is the
// end user.
func New(client Backend, log *slog.Logger, trusted []netip.Prefix) *Page {
	return &Page{client: client, log: log, trusted: trusted}
}

// ServeHTTP answers GET (render the form) and POST (submit it) on Path, and the verification
// page on VerifyPath.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	switch r.URL.Path {
	case VerifyPath:
		p.serveVerify(w, r)
		return
	case SecondFactorPath:
		p.submitSecondFactor(w, r)
		return
	case PasskeyPath:
		p.submitPasskey(w, r)
		return
	}
	if p.serveProvider(w, r) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		p.show(w, r)
	case http.MethodPost:
		p.submit(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.logRefusal(r, "method "+r.Method+" is not allowed")
		p.renderError(w, r, http.StatusMethodNotAllowed, msgBadRequest)
	}
}

// show renders the form for a valid link and an error page for anything else. It never redirects:
// a link that failed the checks must not send the browser anywhere it names.
func (p *Page) show(w http.ResponseWriter, r *http.Request) {
	params, err := ParamsFrom(r.URL.Query())
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadLink)
		return
	}
	lc, err := p.describe(r, params)
	if err != nil {
		p.failDescribe(w, r, err)
		return
	}
	view := formView{Params: params}
	view.describe(r, lc)
	p.offerPasskey(r, &view, lc)
	p.renderForm(w, r, http.StatusOK, view)
}

// submit checks the form and signs the user up or in; on success the browser goes to the URL the
// backend built from the registered redirect URI, with a 303 so it is fetched with GET.
func (p *Page) submit(w http.ResponseWriter, r *http.Request) {
	form, ok := p.readForm(w, r)
	if !ok {
		return
	}
	params, err := ParamsFrom(form)
	if err != nil {
		p.logRefusal(r, err.Error())
		p.renderError(w, r, http.StatusBadRequest, msgBadLink)
		return
	}
	view := formView{Params: params, Email: form.Get("email"), Name: form.Get("name")}
	password := form.Get("password")
	if f, bad := badField(view.Email, view.Name, password); bad {
		// The text rule (pkg/text) holds here as everywhere: say which field, never echo bad bytes.
		view.Email, view.Name = text.Sanitize(view.Email), text.Sanitize(view.Name)
		p.retry(w, r, view, f)
		return
	}
	if !CSRF.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		p.retry(w, r, view, failure{status: http.StatusForbidden, message: msgExpired})
		return
	}
	if strings.TrimSpace(view.Email) == "" || password == "" {
		p.retry(w, r, view, failure{status: http.StatusBadRequest, message: msgMissingCredentials})
		return
	}

	var redirect *identityv1.LoginRedirect
	ip, agent := ClientIP(r, p.trusted), UserAgent(r)
	if params.SignUp {
		redirect, err = p.client.SignUp(r.Context(), &identityv1.SignUpRequest{
			Params: params.Proto(), Email: view.Email, Password: password, Name: view.Name, ClientIp: ip, UserAgent: agent,
		})
	} else {
		redirect, err = p.client.SignIn(r.Context(), &identityv1.SignInRequest{
			Params: params.Proto(), Email: view.Email, Password: password, ClientIp: ip, UserAgent: agent,
		})
	}
	if err != nil {
		f := submitFailure(err, params.SignUp)
		if f.status >= http.StatusInternalServerError {
			p.logCause(r, "login submit failed", err)
		} else {
			// The backend's text may name the account (an email address): the code and field say enough.
			st := status.Convert(err)
			p.logRefusal(r, "identity refused the "+params.typeName()+": "+st.Code().String()+fieldNote(st))
		}
		p.retry(w, r, view, f)
		return
	}
	if v := redirect.GetVerification(); v != "" {
		// The address must be verified first; the answer is the same whether a verification mail
		// or a "you already have an account" notice went out.
		p.pending(w, r, pendingView{formView: formView{Params: params, Email: view.Email}, Verification: v}, failure{status: http.StatusOK})
		return
	}
	if flow := redirect.GetSecondFactor(); flow != "" {
		// The password was right; the sign-in continues once the second factor is proved.
		p.askSecondFactor(w, r, secondFactorView{formView: formView{Params: params}, Flow: flow, Enrol: redirect.GetEnrol()}, failure{status: http.StatusOK})
		return
	}
	target, err := url.Parse(redirect.GetUrl())
	if err != nil || !target.IsAbs() {
		// The backend builds this URL; a relative or broken one is its fault, and following it
		// would land the browser on the edge instead of the app.
		p.logCause(r, "login redirect is not an absolute URL", errors.New("unusable redirect URL"))
		p.retry(w, r, view, failure{status: http.StatusInternalServerError, message: msgInternal})
		return
	}
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

// ReadForm reads a url-encoded POST body of at most maxForm bytes. Only the body counts: a query
// string on the form's action must not override the fields. A refusal is the status to answer and
// the reason to log; status is 0 for a form that was read.
func ReadForm(w http.ResponseWriter, r *http.Request) (form url.Values, status int, reason string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, http.StatusUnsupportedMediaType, "the form is not application/x-www-form-urlencoded"
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge, "the form is too large"
		}
		return nil, http.StatusBadRequest, "the form cannot be parsed"
	}
	return r.PostForm, 0, ""
}

// readForm is ReadForm answering a refusal with the page's error card; it reports whether the form
// was read.
func (p *Page) readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	form, refused, reason := ReadForm(w, r)
	if refused != 0 {
		p.logRefusal(r, reason)
		p.renderError(w, r, refused, msgBadRequest)
		return nil, false
	}
	return form, true
}

// badField checks the typed fields against the text rule and returns the answer for the first
// that breaks it. The password is held to it too: a control character is never typed into a
// password field, and one that arrives is a forged or broken request.
func badField(email, name, password string) (failure, bool) {
	for _, f := range []struct{ value, message string }{
		{email, msgBadEmail},
		{name, msgBadName},
		{password, msgBadPasswordCharacters},
	} {
		if !text.Valid(f.value) {
			return failure{status: http.StatusBadRequest, message: f.message}, true
		}
	}
	return failure{}, false
}

// retry re-renders the form after a failed submission. It asks the backend for the app again
// rather than trusting anything posted, so the page never shows a name the client made up.
func (p *Page) retry(w http.ResponseWriter, r *http.Request, view formView, f failure) {
	lc, err := p.describe(r, view.Params)
	if err != nil {
		p.failDescribe(w, r, err)
		return
	}
	view.describe(r, lc)
	view.Message = f.message
	p.offerPasskey(r, &view, lc)
	SetRetryAfter(w.Header(), f.retryAfter)
	p.renderForm(w, r, f.status, view)
}

func (p *Page) describe(r *http.Request, params Params) (*identityv1.LoginContext, error) {
	return p.client.DescribeLogin(r.Context(), &identityv1.DescribeLoginRequest{
		ClientId:    params.ClientID,
		RedirectUri: params.RedirectURI,
	})
}

// failDescribe renders the error page for a link the backend refused (or could not check).
func (p *Page) failDescribe(w http.ResponseWriter, r *http.Request, err error) {
	f := describeFailure(err)
	if f.status >= http.StatusInternalServerError {
		p.logCause(r, "login link check failed", err)
	} else {
		// Unknown app, disabled app, unregistered redirect_uri: the visitor is told only that the
		// link is bad (so it cannot probe which apps exist); the log says which.
		st := status.Convert(err)
		p.logRefusal(r, "identity refused the link: "+st.Code().String()+fieldNote(st)+": "+st.Message())
	}
	SetRetryAfter(w.Header(), f.retryAfter)
	p.renderError(w, r, f.status, f.message)
}

// formView is what the form template shows. Every value is escaped by html/template.
type formView struct {
	Params  Params
	AppName string // the app's display name, else its name
	Brand   webpage.Brand
	Email   string // repeated after a failure; the password never is
	Name    string
	Message string // a catalog key
	CSRF    string
	// Providers are the app's identity providers, one "Continue with …" link each.
	Providers []*identityv1.LoginProvider
	// Passkey is the passkey sign-in the sign-in form offers beside the password (zero: none).
	Passkey webpage.Passkey
	// Printer speaks the page's language.
	locale.Printer
}

// describe takes what the backend said about the app: its name, branding and default language,
// which decides the page's language when neither the link nor the browser does.
func (v *formView) describe(r *http.Request, lc *identityv1.LoginContext) {
	b := lc.GetBranding()
	v.AppName = cmp.Or(b.GetDisplayName(), lc.GetAppName())
	v.Brand = webpage.BrandOf(b)
	v.Printer = locale.For(webpage.Language(r, b.GetDefaultLanguage()))
	v.Providers = lc.GetProviders()
}

func (v formView) Title() string {
	if v.Params.SignUp {
		return v.T("login.signUp.title")
	}
	return v.T("login.signIn.title")
}

// Head is the layout's view of the page.
func (v formView) Head() webpage.Head {
	return webpage.Head{Title: v.Title(), Brand: v.Brand, Printer: v.Printer}
}

func (v formView) Type() string      { return v.Params.typeName() }
func (v formView) Action() string    { return Path }
func (v formView) SwitchURL() string { return v.Params.switchURL() }

func (p *Page) renderForm(w http.ResponseWriter, r *http.Request, status int, view formView) {
	view.CSRF = CSRF.Issue(w, r)
	webpage.SetSecurityHeaders(w.Header(), RedirectSource(view.Params.RedirectURI), view.Brand.LogoSource())
	if view.Passkey.Nonce != "" {
		webpage.AllowScript(w.Header(), view.Passkey.Nonce)
	}
	p.render(w, r, status, "form", view)
}

// renderError shows the error card.
func (p *Page) renderError(w http.ResponseWriter, r *http.Request, status int, message string) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	p.render(w, r, status, "card", webpage.NewCard(r, "login.error.title", message))
}

// render executes a template into a buffer first, so a template failure still leaves the status
// and body unwritten and can become a plain 500.
func (p *Page) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	if err := webpage.Render(w, pages, status, name, data); err != nil {
		p.logCause(r, "render login page", err)
	}
}

// logCause records why a request failed; the end user only sees a generic message and the
// request id. Never pass anything that may hold the password.
func (p *Page) logCause(r *http.Request, msg string, err error) {
	webpage.LogFailure(p.log, r, msg, err)
}

// logRefusal records at info why the page refused a request, on a line carrying the request id
// the error card shows as its reference, so whoever is given the reference finds the reason.
func (p *Page) logRefusal(r *http.Request, reason string) {
	p.log.InfoContext(r.Context(), "login refused",
		slog.String("request_id", reqid.From(r.Context())),
		slog.String("reason", reason))
}

// fieldNote names the field a refusal is about (" (redirect_uri)"), or is "".
func fieldNote(st *status.Status) string {
	if f := grpcx.FieldOf(st); f != "" {
		return " (" + f + ")"
	}
	return ""
}

// ClientIP is the end user's address, which feeds the attempt limits. It is the TCP peer unless
// that peer is a trusted proxy: then X-Forwarded-For is read from the right, skipping trusted
// proxies, and the first address not among them is the user. Entries left of it are whatever the
// client sent and are never believed.
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		host, _, splitErr := net.SplitHostPort(r.RemoteAddr)
		if splitErr != nil {
			return r.RemoteAddr
		}
		return host
	}
	addr := peer.Addr().Unmap()
	if !isTrusted(addr, trusted) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop ends what can be believed
		}
		addr = hop.Unmap()
		if !isTrusted(addr, trusted) {
			break
		}
	}
	return addr.String()
}

// maxUserAgent is the longest User-Agent identity keeps with a session (its domain.MaxUserAgent),
// in bytes here, which is never more characters.
const maxUserAgent = 512

// UserAgent is the browser's User-Agent as the session the sign-in (or reset) starts records it: the header
// describes the session to its user, so one that breaks the text rule (pkg/text) is left out
// rather than refusing the sign-in over a header the person never chose, and a long one is cut.
func UserAgent(r *http.Request) string {
	ua := strings.TrimSpace(r.UserAgent())
	if !text.Valid(ua) {
		return ""
	}
	if len(ua) <= maxUserAgent {
		return ua
	}
	cut := maxUserAgent
	for cut > 0 && !utf8.RuneStart(ua[cut]) {
		cut--
	}
	return ua[:cut]
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
