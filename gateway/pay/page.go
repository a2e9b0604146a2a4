package pay

import (
	"context"
	_ "embed"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/reqid"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Paths of the two pages.
const (
	Path       = "/pay"
	ReturnPath = "/pay/return"
)

// stateCookie carries "<session id>.<state>" from the payment page to the return page of the same
// browser: the provider's redirect does not carry the app's state, and the app needs it back.
const stateCookie = "berth_pay_state"

// cookieLifetime bounds how long a payer may take at the provider and still come back with state.
const cookieLifetime = 2 * 60 * 60

var (
	uuidShape  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hashShape  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	stateShape = regexp.MustCompile(`^[A-Za-z0-9._-]{64}$`)
)

//go:embed page.html
var pageHTML string

var page = webpage.Template("pay", pageHTML)

// Messages the pages show, keys of pkg/locale's catalog; none reveals whether a session exists.
const (
	msgBadLink     = "pay.error.badLink"
	msgFinished    = "pay.error.finished"
	msgInternal    = "page.error.internal"
	msgUnavailable = "page.error.unavailable"
)

// Apps is the part of identity's LoginService the pages ask for the app's name and branding.
type Apps interface {
	DescribeApp(ctx context.Context, in *identityv1.DescribeAccountRequest, opts ...grpc.CallOption) (*identityv1.LoginContext, error)
}

// Pages serves both pages over billing's PaymentPageService.
type Pages struct {
	client billingv1.PaymentPageServiceClient
	apps   Apps
	log    *slog.Logger
}

// New returns the pages backed by billing, in the look identity (apps) names for the link's app
// (calls carry the service token).
func New(client billingv1.PaymentPageServiceClient, apps Apps, log *slog.Logger) *Pages {
	return &Pages{client: client, apps: apps, log: log}
}

// Open is GET /pay?client_id&type=payment&session_id&hash&state: it checks the link and forwards
// the browser to the provider's checkout.
func (p *Pages) Open(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	q := r.URL.Query()
	clientID, sessionID, hash, state := q.Get("client_id"), q.Get("session_id"), q.Get("hash"), q.Get("state")
	if q.Get("type") != "payment" || !uuidShape.MatchString(clientID) || !uuidShape.MatchString(sessionID) ||
		!hashShape.MatchString(hash) || !stateShape.MatchString(state) {
		p.render(w, r, "", http.StatusBadRequest, msgBadLink)
		return
	}
	opened, err := p.client.OpenCheckout(r.Context(), &billingv1.OpenCheckoutRequest{
		ClientId: clientID, SessionId: sessionID, Hash: hash, State: state,
	})
	if err != nil {
		p.fail(w, r, clientID, err)
		return
	}
	target, err := url.Parse(opened.GetProviderUrl())
	if err != nil || (target.Scheme != "https" && target.Scheme != "http") || target.Host == "" {
		p.log.ErrorContext(r.Context(), "provider checkout URL is not absolute", "request_id", reqid.From(r.Context()))
		p.render(w, r, clientID, http.StatusInternalServerError, msgInternal)
		return
	}
	http.SetCookie(w, &http.Cookie{
		// The app's id rides along so that the return page's card can wear the app's look.
		Name: stateCookie, Value: strings.ToLower(sessionID) + "." + state + "." + strings.ToLower(clientID), Path: Path, MaxAge: cookieLifetime,
		// Lax: the cookie must come back on the provider's top-level redirect to the return page,
		// which is a cross-site navigation; nothing else cross-site ever sends it.
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

// Return is GET /pay/return?session_id: billing settles the session and names the app's URL.
func (p *Pages) Return(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	sessionID := r.URL.Query().Get("session_id")
	if !uuidShape.MatchString(sessionID) {
		p.render(w, r, "", http.StatusBadRequest, msgBadLink)
		return
	}
	state, clientID := stateOf(r, sessionID)
	returned, err := p.client.ReturnCheckout(r.Context(), &billingv1.ReturnCheckoutRequest{SessionId: sessionID, State: state})
	if err != nil {
		p.fail(w, r, clientID, err)
		return
	}
	target, err := url.Parse(returned.GetRedirectUrl())
	if err != nil || !target.IsAbs() {
		p.log.ErrorContext(r.Context(), "payment return URL is not absolute", "request_id", reqid.From(r.Context()))
		p.render(w, r, clientID, http.StatusInternalServerError, msgInternal)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Path: Path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

// stateOf reads the state cookie of sessionID: "<session id>.<state>.<app id>" (the state is 64
// characters, which may hold dots). A cookie of another session, or of another shape, answers
// nothing; one without a well-formed app id answers the state alone.
func stateOf(r *http.Request, sessionID string) (state, clientID string) {
	c, err := r.Cookie(stateCookie)
	if err != nil {
		return "", ""
	}
	id, rest, ok := strings.Cut(c.Value, ".")
	if !ok || id != strings.ToLower(sessionID) || len(rest) < 64 || !stateShape.MatchString(rest[:64]) {
		return "", ""
	}
	state, rest = rest[:64], rest[64:]
	if app, ok := strings.CutPrefix(rest, "."); ok && uuidShape.MatchString(app) {
		clientID = app
	} else if rest != "" {
		return "", ""
	}
	return state, clientID
}

// fail renders billing's refusal: a bad link and a finished checkout are the payer's to act on;
// anything else is logged and shown as ours.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, clientID string, err error) {
	switch status.Code(err) {
	case codes.NotFound, codes.InvalidArgument:
		p.render(w, r, clientID, http.StatusBadRequest, msgBadLink)
	case codes.FailedPrecondition:
		p.render(w, r, clientID, http.StatusConflict, msgFinished)
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		p.render(w, r, clientID, http.StatusServiceUnavailable, msgUnavailable)
	default:
		webpage.LogFailure(p.log, r, "payment page failed", err)
		p.render(w, r, clientID, http.StatusInternalServerError, msgInternal)
	}
}

// render answers the card, in the look of the app clientID names ("" for none known).
func (p *Pages) render(w http.ResponseWriter, r *http.Request, clientID string, code int, message string) {
	card := webpage.NewCard(r, "pay.title", message)
	if lc := p.app(r, clientID); lc != nil {
		card = card.WithApp(r, lc.GetBranding())
	}
	webpage.SetSecurityHeaders(w.Header(), "", card.Brand.LogoSource())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := page.Execute(w, card); err != nil {
		webpage.LogFailure(p.log, r, "render payment page", err)
	}
}

// app asks identity for the app of clientID, nil when there is none to ask for or identity does
// not answer: the card then keeps the neutral look, since a payer must see the refusal either way.
func (p *Pages) app(r *http.Request, clientID string) *identityv1.LoginContext {
	if clientID == "" {
		return nil
	}
	lc, err := p.apps.DescribeApp(r.Context(), &identityv1.DescribeAccountRequest{ClientId: clientID})
	if err != nil {
		if c := status.Code(err); c != codes.InvalidArgument && c != codes.NotFound {
			webpage.LogFailure(p.log, r, "describe the payment's app", err)
		}
		return nil
	}
	return lc
}
