package console

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/sealbox"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// The console's paths. AppPath, KeysPath and the users and tenants paths hold the app's id ({app}),
// UserPath the user's too ({user}), TenantPath the tenant's ({tenant}).
const (
	Path              = "/console"
	SignInPath        = Path + "/sign-in"
	SecondFactorPath  = Path + "/sign-in/second-factor"
	PasskeySignInPath = Path + "/sign-in/passkey"
	SignOutPath       = Path + "/sign-out"
	InvitationPath    = Path + "/invitation"
	SwitchPath        = Path + "/switch"
	SecurityPath      = Path + "/security"
	MembersPath       = Path + "/members"
	AppPath           = Path + "/apps/{app}"
	KeysPath          = Path + "/apps/{app}/keys"
	UsersPath         = Path + "/apps/{app}/users"
	UserPath          = Path + "/apps/{app}/users/{user}"
	TenantsPath       = Path + "/apps/{app}/tenants"
	TenantPath        = Path + "/apps/{app}/tenants/{tenant}"
	StylePath         = Path + "/static/console.css"
	ScriptPath        = Path + "/static/console.js"
	PasskeyScriptPath = Path + "/static/passkey.js"
)

// Route is one method and path pattern the console answers, for the edge to mount.
type Route struct{ Method, Path string }

// Backends are the console's gRPC clients. Service carries the service token (the steps before a
// member has a token); every other client must carry nothing of its own: the console adds the
// member's operator token to each call.
type Backends struct {
	Service  identityv1.MemberServiceClient
	Members  identityv1.MemberServiceClient
	Admin    identityv1.IdentityAdminServiceClient
	Operator identityv1.OperatorServiceClient
	// Users and Identity serve the users pages: the search, a user's detail and the owner's mails
	// (UserAdminService), freezing, ending sessions and deleting (IdentityService's routes).
	Users    identityv1.UserAdminServiceClient
	Identity identityv1.IdentityServiceClient
	// Tenants searches an app's tenants; Tenant reads one with its addresses and users.
	Tenants tenantv1.TenantAdminServiceClient
	Tenant  tenantv1.TenantServiceClient
	// Billing serves the billing pages and a tenant's money, and freezes or unfreezes a tenant.
	Billing billingv1.BillingAdminServiceClient
	// Analytics answers the analytics page's daily series.
	Analytics analyticsv1.AnalyticsSeriesServiceClient
	Outbound  outboundv1.OutboundServiceClient
	// Audit lists an app's audit log; AuditRetention reads and sets how long it is kept.
	Audit          analyticsv1.AnalyticsServiceClient
	AuditRetention analyticsv1.AnalyticsAdminServiceClient
	Webhooks       webhookv1.WebhookAdminServiceClient
}

// Console is the web console. It keeps no state between requests: the session is the sealed
// cookie, the CSRF token a cookie of its own.
type Console struct {
	Backends
	sessions sessions
	log      *slog.Logger
	trusted  []netip.Prefix
	mux      *http.ServeMux
	routes   []Route
}

// KeySize is the length of the key sealing the session cookie (AES-256).
const KeySize = sealbox.KeySize

// New returns the console. key seals the session cookie: every edge serving the console must have
// the same. trusted are the proxies whose X-Forwarded-For names the browser's address.
func New(b Backends, key []byte, log *slog.Logger, trusted []netip.Prefix) (*Console, error) {
	box, err := sealbox.New(key)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c := &Console{Backends: b, sessions: sessions{box: box, now: time.Now}, log: log, trusted: trusted, mux: http.NewServeMux()}
	c.register()
	return c, nil
}

// Routes are the methods and paths the console answers, for the edge to mount.
func (c *Console) Routes() []Route { return c.routes }

// Serves reports whether path is the console's (every path under Path), whose forms it reads
// itself.
func Serves(path string) bool { return path == Path || strings.HasPrefix(path, Path+"/") }

// handle registers h for method and path.
func (c *Console) handle(method, path string, h http.HandlerFunc) {
	c.routes = append(c.routes, Route{Method: method, Path: path})
	c.mux.HandleFunc(method+" "+path, h)
}

// ServeHTTP answers the console's routes under its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetStrictSecurityHeaders(w.Header())
	c.mux.ServeHTTP(w, r)
}

// languageCookie remembers the language the member chose with a link's language parameter.
const languageCookie = "berth_console_language"

// printer is the language r is answered in: the link's language parameter (remembered in a
// cookie for the next pages), then that cookie, then Accept-Language.
func (c *Console) printer(w http.ResponseWriter, r *http.Request) locale.Printer {
	chosen := ""
	if r.Method == http.MethodGet {
		if chosen = locale.Requested(r.URL.Query()); chosen != "" {
			setCookie(w, r, languageCookie, chosen, int((365 * 24 * time.Hour).Seconds()))
		}
	}
	if k, err := r.Cookie(languageCookie); chosen == "" && err == nil {
		chosen = locale.Requested(url.Values{"language": {k.Value}})
	}
	return locale.For(locale.Choose(chosen, r.Header.Get("Accept-Language"), ""))
}

// csrf is the double-submit protection of every console form.
var csrf = webpage.CSRF{Cookie: "berth_console_csrf", Path: Path}

// withToken is ctx carrying the member's operator token to the call.
func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, authn.MDAuthorization, "Bearer "+token)
}

// visit is one request of a signed-in member: the session, the member as identity describes them
// (which checks the token on every page), the language and the call context.
type visit struct {
	session session
	member  *identityv1.MemberProfile
	ctx     context.Context
	p       locale.Printer
}

// signedIn wraps a page that needs a member: without a live session the browser is sent to the
// sign-in page; otherwise the session's idle clock restarts and h runs.
func (c *Console) signedIn(h func(http.ResponseWriter, *http.Request, visit)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := c.printer(w, r)
		s, err := c.sessions.open(r)
		if err != nil {
			c.toSignIn(w, r, hasCookie(r, SessionCookie))
			return
		}
		ctx := withToken(r.Context(), s.Token)
		m, err := c.Members.DescribeMember(ctx, &emptypb.Empty{})
		if err != nil {
			c.fail(w, r, visit{session: s, ctx: ctx, p: p}, err, "describe the member")
			return
		}
		if err := c.sessions.write(w, r, s); err != nil {
			c.internal(w, r, p, err, "seal the session")
			return
		}
		h(w, r, visit{session: s, member: m, ctx: ctx, p: p})
	}
}

func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

// toSignIn ends the session cookie and sends the browser to the sign-in page; ended says a
// session was there and timed out or was refused, which the page then says.
func (c *Console) toSignIn(w http.ResponseWriter, r *http.Request, ended bool) {
	target := SignInPath
	if ended {
		c.sessions.clear(w, r)
		target += "?notice=ended"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// readForm reads a POST's url-encoded body and checks its CSRF token; a refusal is answered.
func (c *Console) readForm(w http.ResponseWriter, r *http.Request, p locale.Printer, v *visit) (url.Values, bool) {
	form, refusedStatus, reason := login.ReadForm(w, r)
	if refusedStatus != 0 {
		c.refuse(w, r, p, v, failure{status: refusedStatus, message: msgBadRequest}, reason)
		return nil, false
	}
	if !csrf.Valid(r) {
		c.refuse(w, r, p, v, failure{status: http.StatusForbidden, message: msgExpired}, "the form's CSRF token does not match its cookie")
		return nil, false
	}
	return form, true
}

// badForm answers a form a parser refused: 400 naming the field.
func (c *Console) badForm(w http.ResponseWriter, r *http.Request, p locale.Printer, v *visit, err error) {
	c.refuse(w, r, p, v, failure{status: http.StatusBadRequest, message: msgBadField, field: refused(err)}, err.Error())
}

// fail answers a failed backend call: a refused or ended session signs in again; anything else is
// a message on the console's problem page (logged at error when it is Berth's fault).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v visit, err error, what string) {
	if status.Code(err) == codes.Unauthenticated {
		c.log.InfoContext(r.Context(), "console session refused by identity", slog.String("request_id", reqid.From(r.Context())))
		c.toSignIn(w, r, true)
		return
	}
	f, ours := failureOf(err)
	if ours {
		webpage.LogFailure(c.log, r, "console: "+what, err)
	}
	var vp *visit
	if v.member != nil {
		vp = &v
	}
	c.refuse(w, r, v.p, vp, f, "a backend refused to "+what+": "+status.Code(err).String())
}

// internal answers a failure of the console itself.
func (c *Console) internal(w http.ResponseWriter, r *http.Request, p locale.Printer, err error, what string) {
	webpage.LogFailure(c.log, r, "console: "+what, err)
	c.render(w, r, http.StatusInternalServerError, "problem", problemView{frame: c.frame(w, r, p, nil, "console.problem.title"), Message: msgInternal})
}

// refuse answers f on the problem page, with the navigation when a member is signed in (v).
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, p locale.Printer, v *visit, f failure, reason string) {
	if f.status < http.StatusInternalServerError {
		c.log.InfoContext(r.Context(), "console refused", slog.String("request_id", reqid.From(r.Context())), slog.String("reason", reason))
	}
	login.SetRetryAfter(w.Header(), f.retryAfter)
	var m *identityv1.MemberProfile
	if v != nil {
		m = v.member
	}
	c.render(w, r, f.status, "problem", problemView{frame: c.frame(w, r, p, m, "console.problem.title"), Message: f.message, Field: f.field})
}

// render answers the template name, logging a template failure (which answers a plain 500).
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	if err := webpage.Render(w, pages, status, name, data); err != nil {
		webpage.LogFailure(c.log, r, "console: render "+name, err)
	}
}

// back sends the browser to target after a change, with a notice key the page shows.
func back(w http.ResponseWriter, r *http.Request, target, notice string) {
	if notice != "" {
		target += "?notice=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// posted reads a page's POST: the path's ids through ref, the form with its CSRF token, and the
// form through parse. A refusal of any is answered here, 400 naming the field (ok false).
func posted[R, F any](c *Console, w http.ResponseWriter, r *http.Request, v *visit, ref func(*http.Request) (R, error), parse func(url.Values) (F, error)) (R, F, bool) {
	return parsed(c, w, r, v, ref, func() (url.Values, bool) { return c.readForm(w, r, v.p, v) }, parse)
}

// queried reads a page's GET: the path's ids through ref and the link's query through parse,
// answering a refusal of either (ok false).
func queried[R, F any](c *Console, w http.ResponseWriter, r *http.Request, v *visit, ref func(*http.Request) (R, error), parse func(url.Values) (F, error)) (R, F, bool) {
	return parsed(c, w, r, v, ref, func() (url.Values, bool) { return r.URL.Query(), true }, parse)
}

// parsed is posted and queried: values reads the request's fields (answering a refusal itself).
func parsed[R, F any](c *Console, w http.ResponseWriter, r *http.Request, v *visit, ref func(*http.Request) (R, error),
	values func() (url.Values, bool), parse func(url.Values) (F, error)) (R, F, bool) {
	var (
		id R
		in F
	)
	id, err := ref(r)
	if err != nil {
		c.badForm(w, r, v.p, v, err)
		return id, in, false
	}
	fields, ok := values()
	if !ok {
		return id, in, false
	}
	if in, err = parse(fields); err != nil {
		c.badForm(w, r, v.p, v, err)
		return id, in, false
	}
	return id, in, true
}
