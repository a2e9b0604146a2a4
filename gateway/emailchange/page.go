package emailchange

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"mime"
	"net/http"

	"google.golang.org/grpc"
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

// Path is where the page is served; identity's mails link here (app.EmailChangePath).
const Path = "/email-change"

// maxForm is the POST body limit: the form has two short fields.
const maxForm = 16 << 10

// maxToken bounds the token read from a link or form: identity's link secrets are 43 characters,
// so anything much longer is not one and is refused without a call.
const maxToken = 128

// The page's messages: catalog keys (pkg/locale) chosen by outcome, never the backend's text.
const (
	msgBadLink     = "emailChange.error.badLink"
	msgBadRequest  = "emailChange.error.badRequest"
	msgExpired     = "emailChange.error.expired"
	msgInternal    = "page.error.internal"
	msgUnavailable = "page.error.unavailable"
)

//go:embed page.html
var pageHTML string

var pages = webpage.Template("emailchange", pageHTML)

// csrf is the page's double-submit check, with a cookie of its own.
var csrf = webpage.CSRF{Cookie: "berth_email_change_csrf", Path: Path}

// Backend is the part of identity's LoginService the page calls.
type Backend interface {
	DescribeEmailChange(ctx context.Context, in *identityv1.EmailChangeLink, opts ...grpc.CallOption) (*identityv1.EmailChangeContext, error)
	ConfirmEmailChange(ctx context.Context, in *identityv1.EmailChangeLink, opts ...grpc.CallOption) (*identityv1.EmailChangeContext, error)
}

// Page is the confirmation page. It holds no state between requests: the token travels in the
// link and then the form, the CSRF token in a cookie.
type Page struct {
	client Backend
	log    *slog.Logger
}

// New returns the page backed by identity; log receives the causes of failures answered with a 5xx
// and the reasons of refusals.
func New(client Backend, log *slog.Logger) *Page {
	return &Page{client: client, log: log}
}

// ServeHTTP answers GET (show the confirmation) and POST (confirm) on Path.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	switch r.Method {
	case http.MethodGet:
		p.show(w, r)
	case http.MethodPost:
		p.confirm(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.logRefusal(r, "method "+r.Method+" is not allowed")
		p.renderError(w, r, failure{http.StatusMethodNotAllowed, msgBadRequest})
	}
}

// show checks the link and renders the confirmation form; it changes nothing.
func (p *Page) show(w http.ResponseWriter, r *http.Request) {
	token, ok := wellFormedToken(r.URL.Query()["token"])
	if !ok {
		p.logRefusal(r, "the link has no usable token")
		p.renderError(w, r, failure{http.StatusBadRequest, msgBadLink})
		return
	}
	p.renderForm(w, r, http.StatusOK, token, "")
}

// renderForm asks identity about the link and renders the form with message ("" for none).
func (p *Page) renderForm(w http.ResponseWriter, r *http.Request, status int, token, message string) {
	c, err := p.client.DescribeEmailChange(r.Context(), &identityv1.EmailChangeLink{Token: token})
	if err != nil {
		p.fail(w, r, "email-change link check failed", err)
		return
	}
	v := newView(r, c, "emailChange.title")
	v.Token, v.Message, v.CSRF = token, message, csrf.Issue(w, r)
	webpage.SetSecurityHeaders(w.Header(), "", v.Brand.LogoSource())
	p.render(w, r, status, "confirm", v)
}

// confirm checks the form and has identity make the change.
func (p *Page) confirm(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		p.logRefusal(r, "the form is not application/x-www-form-urlencoded")
		p.renderError(w, r, failure{http.StatusUnsupportedMediaType, msgBadRequest})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			p.logRefusal(r, "the form is too large")
			p.renderError(w, r, failure{http.StatusRequestEntityTooLarge, msgBadRequest})
			return
		}
		p.logRefusal(r, "the form cannot be parsed")
		p.renderError(w, r, failure{http.StatusBadRequest, msgBadRequest})
		return
	}
	token, ok := wellFormedToken(r.PostForm["token"]) // only the body counts, not the query
	if !ok {
		p.logRefusal(r, "the form has no usable token")
		p.renderError(w, r, failure{http.StatusBadRequest, msgBadLink})
		return
	}
	if !csrf.Valid(r) {
		p.logRefusal(r, "the CSRF token is missing, wrong or expired")
		p.renderForm(w, r, http.StatusForbidden, token, msgExpired)
		return
	}
	c, err := p.client.ConfirmEmailChange(r.Context(), &identityv1.EmailChangeLink{Token: token})
	if err != nil {
		p.fail(w, r, "email-change confirmation failed", err)
		return
	}
	v := newView(r, c, "emailChange.done.title")
	webpage.SetSecurityHeaders(w.Header(), "", v.Brand.LogoSource())
	p.render(w, r, http.StatusOK, "done", v)
}

// wellFormedToken is the one token of a link or form, when it could be one: a single value, short,
// of printable text. Anything else never reaches identity.
func wellFormedToken(values []string) (string, bool) {
	if len(values) != 1 || values[0] == "" || len(values[0]) > maxToken || !text.Valid(values[0]) {
		return "", false
	}
	return values[0], true
}

// failure is how the page answers: the status and the message shown.
type failure struct {
	status  int
	message string
}

// failureOf maps a failed identity call. Every refusal of the link (used, retired, expired,
// unknown, the address taken meanwhile) is InvalidArgument or NotFound and gets one answer.
func failureOf(err error) failure {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return failure{http.StatusBadRequest, msgBadLink}
	case codes.Unavailable, codes.ResourceExhausted:
		return failure{http.StatusServiceUnavailable, msgUnavailable}
	default:
		return failure{http.StatusInternalServerError, msgInternal}
	}
}

// fail renders the error card for a failed identity call and logs why.
func (p *Page) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	f := failureOf(err)
	st := status.Convert(err)
	if f.status >= http.StatusInternalServerError {
		webpage.LogFailure(p.log, r, what, err)
		if f.status == http.StatusServiceUnavailable {
			login.SetRetryAfter(w.Header(), grpcx.RetryAfterOf(st))
		}
	} else {
		p.logRefusal(r, "identity refused the link: "+st.Code().String())
	}
	p.renderError(w, r, f)
}

// view is what the templates show. Every value is escaped by html/template.
type view struct {
	title   string // catalog key of the page's title
	AppName string // the app's display name, else its name
	Brand   webpage.Brand
	Email   string // the new address
	Token   string
	Message string // a catalog key
	CSRF    string
	// Printer speaks the page's language.
	locale.Printer
}

// newView is the page about c with the title key title, in the language the request names, else
// the app's default.
func newView(r *http.Request, c *identityv1.EmailChangeContext, title string) view {
	b := c.GetBranding()
	return view{
		title:   title,
		AppName: cmp.Or(b.GetDisplayName(), c.GetAppName()),
		Brand:   webpage.BrandOf(b),
		Email:   c.GetEmail(),
		Printer: locale.For(webpage.Language(r, b.GetDefaultLanguage())),
	}
}

// Head is the layout's view of the page.
func (v view) Head() webpage.Head {
	return webpage.Head{Title: v.T(v.title), Brand: v.Brand, Printer: v.Printer}
}

// Action is where the form posts.
func (view) Action() string { return Path }

// renderError shows the error card.
func (p *Page) renderError(w http.ResponseWriter, r *http.Request, f failure) {
	p.render(w, r, f.status, "card", webpage.NewCard(r, "emailChange.error.title", f.message))
}

// render answers with the page's template name; a template failure becomes a plain 500.
func (p *Page) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	if err := webpage.Render(w, pages, status, name, data); err != nil {
		webpage.LogFailure(p.log, r, "render email-change page", err)
	}
}

// logRefusal records at info why the page refused a request, with the request id the error card
// shows as its reference.
func (p *Page) logRefusal(r *http.Request, reason string) {
	p.log.InfoContext(r.Context(), "email change refused",
		slog.String("request_id", reqid.From(r.Context())), slog.String("reason", reason))
}
