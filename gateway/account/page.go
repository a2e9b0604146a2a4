package account

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Path is the account page; CallbackPath is where its sign-in returns with a code.
const (
	Path         = "/account"
	CallbackPath = Path + "/callback"
)

// maxForm is the POST body limit: the forms have a few short fields.
const maxForm = 64 << 10

//go:embed page.html
var pageHTML string

var pages = webpage.Template("account", pageHTML)

// Page is the hosted account page. It keeps no state between requests: the app travels in the
// link and the forms, the sign-in and the CSRF token in cookies.
type Page struct {
	login    identityv1.LoginServiceClient
	tokens   identityv1.TokenServiceClient
	identity identityv1.IdentityServiceClient
	log      *slog.Logger
	trusted  []netip.Prefix
	now      func() time.Time
}

// New returns the page. login and tokens reach identity's LoginService (service token) and
// TokenService; identity is called with the signed-in user's access token, as an app would, so
// the sessions routes' own rules hold for the page too. trusted are the proxies whose
// X-Forwarded-For names the end user (the password check's attempt limits).
func New(login identityv1.LoginServiceClient, tokens identityv1.TokenServiceClient, identity identityv1.IdentityServiceClient, log *slog.Logger, trusted []netip.Prefix) *Page {
	return &Page{login: login, tokens: tokens, identity: identity, log: log, trusted: trusted, now: time.Now}
}

// ServeHTTP answers GET and POST on Path and GET on CallbackPath.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	switch {
	case r.URL.Path == CallbackPath && r.Method == http.MethodGet:
		p.callback(w, r)
	case r.URL.Path == Path && r.Method == http.MethodGet:
		p.show(w, r)
	case r.URL.Path == Path && r.Method == http.MethodPost:
		p.submit(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.refuse(w, r, http.StatusMethodNotAllowed, msgBadLink, "method "+r.Method+" is not allowed")
	}
}

// app is what the page knows of the app it serves, with the language it speaks.
type app struct {
	ID, Name string
	Callback string
	Brand    webpage.Brand
	Language string // the link's language, carried through the forms and the sign-in
	locale.Printer
}

// describe asks identity for the app of clientID (known and enabled) and its account callback.
func (p *Page) describe(r *http.Request, clientID, language string) (app, error) {
	lc, err := p.login.DescribeAccount(r.Context(), &identityv1.DescribeAccountRequest{ClientId: clientID})
	if err != nil {
		return app{}, err
	}
	b := lc.GetBranding()
	lang := locale.Choose(language, r.Header.Get("Accept-Language"), b.GetDefaultLanguage())
	return app{
		ID: lc.GetAppId(), Name: cmp.Or(b.GetDisplayName(), lc.GetAppName()), Callback: lc.GetAccountCallbackUri(),
		Brand:    webpage.BrandOf(b),
		Language: language, Printer: locale.For(lang),
	}, nil
}

// secure reports whether the page's cookies are Secure: when the public URL is https, so that a
// local run over plain HTTP still gets its cookies back.
func (a app) secure() bool { return strings.HasPrefix(a.Callback, "https://") }

// pageURL is the page's own link for the app, in the link's language.
func (a app) pageURL(notice string) string {
	q := url.Values{"client_id": {a.ID}}
	if a.Language != "" {
		q.Set("language", a.Language)
	}
	if notice != "" {
		q.Set("notice", notice)
	}
	return Path + "?" + q.Encode()
}

// show renders the page for the signed-in user, or starts the sign-in.
func (p *Page) show(w http.ResponseWriter, r *http.Request) {
	in, err := linkFrom(r.URL.Query())
	if err != nil {
		p.refuse(w, r, http.StatusBadRequest, msgBadLink, err.Error())
		return
	}
	a, err := p.describe(r, in.ClientID, in.Language)
	if err != nil {
		p.fail(w, r, err, "describe")
		return
	}
	token := tokenOf(r)
	if token == "" {
		p.signIn(w, r, a)
		return
	}
	ctx := withToken(r.Context(), token)
	user, err := p.identity.GetMe(ctx, &identityv1.GetMeRequest{})
	if err == nil && user.GetAppId() != a.ID {
		// The cookie belongs to another app's page: this app's page signs in on its own.
		p.signIn(w, r, a)
		return
	}
	if signedOut(err) {
		setCookie(w, tokenCookie, "", -1, a.secure())
		p.signIn(w, r, a)
		return
	}
	if err != nil {
		p.fail(w, r, err, "read the user")
		return
	}
	if in.Link != "" {
		p.startLink(w, r, a, token, in.Link)
		return
	}
	v := view{app: a, User: user, Notice: noticeKey(in.Notice)}
	if noticeIsAlert(in.Notice) {
		v.Notice, v.Message = "", noticeKey(in.Notice)
	}
	if p.readAccount(w, r, token, &v) {
		p.renderPage(w, r, http.StatusOK, v)
	}
}

// startLink sends the browser through the provider of slot to link it to the signed-in user. It
// answers a GET: the page's "Link" is a link, because a form's redirect to the provider's origin
// would break the page's form-action policy. Nothing changes on it: the link is made only at the
// callback, after the person consented at the provider in this browser, whose flow cookie binds
// the callback to this start; and the page's SameSite=Strict cookie never comes with a request
// another site starts, so no other site can start one for the user. The provider sends the browser
// back to the login page's callback, which finishes the link and returns here with a notice.
func (p *Page) startLink(w http.ResponseWriter, r *http.Request, a app, token, slot string) {
	start, err := p.login.StartProviderLink(r.Context(), &identityv1.StartProviderLinkRequest{AccessToken: token, Slot: slot, Language: a.Language})
	if err != nil {
		p.failAction(w, r, a, token, actionLink, err)
		return
	}
	if !login.StartProviderFlow(w, r, start) {
		p.fail(w, r, errors.New("unusable provider URL"), "start the provider link")
	}
}

// readAccount reads what the page shows of the signed-in user besides the user: the sessions,
// the second factors and the sign-in methods. When it reports false it has answered.
func (p *Page) readAccount(w http.ResponseWriter, r *http.Request, token string, v *view) bool {
	sessions, err := p.identity.ListSessions(withToken(r.Context(), token), &identityv1.ListSessionsRequest{UserId: authn.Me})
	if err != nil {
		p.fail(w, r, err, "list the sessions")
		return false
	}
	v.Sessions = sessions.GetItems()
	if v.MFA, err = p.login.DescribeSecondFactors(r.Context(), &identityv1.AccountRequest{AccessToken: token}); err != nil {
		p.fail(w, r, err, "describe the second factors")
		return false
	}
	if v.Methods, err = p.login.DescribeSignInMethods(r.Context(), &identityv1.AccountRequest{AccessToken: token}); err != nil {
		p.fail(w, r, err, "describe the sign-in methods")
		return false
	}
	return true
}

// signIn sends the browser to the hosted login page with a fresh state and nonce, which the flow
// cookie binds to this browser until the callback.
func (p *Page) signIn(w http.ResponseWriter, r *http.Request, a app) {
	if a.Callback == "" {
		p.refuse(w, r, http.StatusServiceUnavailable, msgUnavailable, "identity named no account callback")
		return
	}
	state, nonce := webpage.NewToken(), webpage.NewToken()
	setCookie(w, flowCookie, strings.Join([]string{state, nonce, a.ID, a.Language}, "."), flowMaxAge, a.secure())
	q := url.Values{"client_id": {a.ID}, "redirect_uri": {a.Callback}, "state": {state}, "nonce": {nonce}, "type": {"signIn"}}
	if a.Language != "" {
		q.Set("language", a.Language)
	}
	http.Redirect(w, r, login.Path+"?"+q.Encode(), http.StatusSeeOther)
}

// flow is a sign-in in progress, as its cookie holds it.
type flow struct{ state, nonce, clientID, language string }

func flowOf(r *http.Request) (flow, bool) {
	c, err := r.Cookie(flowCookie)
	if err != nil {
		return flow{}, false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 4 || !webpage.WellFormedToken(parts[0]) || !webpage.WellFormedToken(parts[1]) {
		return flow{}, false
	}
	f := flow{state: parts[0], nonce: parts[1], clientID: parts[2], language: parts[3]}
	if _, err := linkFrom(url.Values{"client_id": {f.clientID}, "language": {f.language}}); err != nil {
		return flow{}, false
	}
	return f, true
}

// callback finishes the sign-in: the state must be the flow cookie's, the code is exchanged, the
// session the exchange started ends at once, and the access token becomes the page's cookie.
func (p *Page) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, ok := flowOf(r)
	if !ok || !equal(f.state, q.Get("state")) || q.Get("code") == "" || !validParam(q.Get("code")) {
		p.refuse(w, r, http.StatusBadRequest, msgSignIn, "the callback's state does not match this browser's sign-in")
		return
	}
	a, err := p.describe(r, f.clientID, f.language)
	if err != nil {
		p.fail(w, r, err, "describe")
		return
	}
	setCookie(w, flowCookie, "", -1, a.secure()) // a state is good for one callback
	list, err := p.tokens.ExchangeToken(r.Context(), &identityv1.ExchangeTokenRequest{
		ClientId: a.ID, GrantType: "authorization_code", RedirectUri: a.Callback, Code: q.Get("code"), Nonce: f.nonce,
	})
	if err != nil || len(list.GetItems()) != 1 {
		p.failSignIn(w, r, a, err)
		return
	}
	tok := list.GetItems()[0]
	if err := p.endOwnSession(r.Context(), tok.GetAccessToken()); err != nil {
		p.fail(w, r, err, "end the page's own session")
		return
	}
	expires, err := strconv.ParseInt(tok.GetExpiresIn(), 10, 64)
	life := time.UnixMilli(expires).Sub(p.now())
	if err != nil || life <= 0 {
		p.fail(w, r, errors.New("the access token's expiry is unusable"), "sign in")
		return
	}
	setCookie(w, tokenCookie, tok.GetAccessToken(), int(life.Seconds()), a.secure())
	http.Redirect(w, r, a.pageURL(""), http.StatusSeeOther)
}

// endOwnSession ends the session the page's code exchange started. The page never keeps its
// refresh token, so nobody could refresh it; left alive it would sit in the user's session list
// for the refresh token's whole life. Its access token stays valid until it expires, as after any
// revocation, which is the page's browser session.
func (p *Page) endOwnSession(ctx context.Context, accessToken string) error {
	sid, err := sessionOf(accessToken)
	if err != nil {
		return err
	}
	_, err = p.identity.RevokeSession(withToken(ctx, accessToken), &identityv1.RevokeSessionRequest{UserId: authn.Me, SessionId: sid})
	return err
}

// sessionOf reads the sid claim of an access token identity has just issued over gRPC, so its
// payload needs no second verification here (identity checks the token on every call anyway).
func sessionOf(accessToken string) (string, error) {
	parts := strings.Split(accessToken, ".")
	if len(parts) != 3 {
		return "", errors.New("the access token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", errors.New("the access token's payload does not decode")
	}
	var claims struct {
		SID string `json:"sid"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.SID == "" {
		return "", errors.New("the access token names no session")
	}
	return claims.SID, nil
}

// submit runs one of the page's actions and sends the browser back to the page with a 303.
func (p *Page) submit(w http.ResponseWriter, r *http.Request) {
	form, ok := p.parseForm(w, r)
	if !ok {
		return
	}
	in, err := actionFrom(form)
	if err != nil {
		p.refuse(w, r, http.StatusBadRequest, msgBadRequest, err.Error())
		return
	}
	a, err := p.describe(r, in.ClientID, in.Language)
	if err != nil {
		p.fail(w, r, err, "describe")
		return
	}
	if !csrf.Valid(r) {
		p.refuse(w, r, http.StatusForbidden, msgExpired, "the CSRF token is missing, wrong or expired")
		return
	}
	if in.Action == actionSignOut {
		setCookie(w, tokenCookie, "", -1, a.secure())
		p.renderSignedOut(w, r, a)
		return
	}
	token := tokenOf(r)
	if token == "" {
		p.refuseIn(w, r, a, http.StatusUnauthorized, msgSignedOut, "the page's sign-in cookie is missing or expired")
		return
	}
	ctx := withToken(r.Context(), token)
	switch in.Action {
	case actionTOTPStart, actionTOTPConfirm, actionNewRecovery, actionPasskeyStart, actionPasskeyFinish:
		p.secondFactor(w, r, a, token, in)
		return
	}
	var notice string
	switch in.Action {
	case actionPassword:
		if in.Current == "" || in.New == "" {
			p.retry(w, r, a, token, failure{status: http.StatusBadRequest, message: msgMissing})
			return
		}
		_, err = p.login.ChangePassword(r.Context(), &identityv1.ChangePasswordRequest{
			AccessToken: token, CurrentPassword: in.Current, NewPassword: in.New, ClientIp: login.ClientIP(r, p.trusted),
		})
		notice = noticePassword
	case actionEnd:
		_, err = p.identity.RevokeSession(ctx, &identityv1.RevokeSessionRequest{UserId: authn.Me, SessionId: in.SessionID})
		notice = noticeEnded
	case actionEndAll:
		_, err = p.identity.RevokeSessions(ctx, &identityv1.RevokeSessionsRequest{UserId: authn.Me})
		notice = noticeEndedAll
	case actionResend:
		var done bool
		notice, done, err = p.resend(w, r, a, token)
		if done {
			return
		}
	case actionUnlink:
		_, err = p.login.UnlinkProvider(r.Context(), &identityv1.UnlinkProviderRequest{
			AccessToken: token, Slot: in.Slot, CurrentPassword: in.Current, ClientIp: login.ClientIP(r, p.trusted),
		})
		notice = noticeUnlinked
	case actionRemoveFactor:
		_, err = p.login.RemoveSecondFactor(r.Context(), &identityv1.RemoveSecondFactorRequest{
			AccessToken: token, Kind: in.Kind, FactorId: in.FactorID, CurrentPassword: in.Current, ClientIp: login.ClientIP(r, p.trusted),
		})
		notice = noticeFactorRemoved
	}
	if err != nil {
		p.failAction(w, r, a, token, in.Action, err)
		return
	}
	http.Redirect(w, r, a.pageURL(notice), http.StatusSeeOther)
}

// failAction answers a refused action: a token identity no longer takes signs in again, anything
// else shows the page with the failure's message.
func (p *Page) failAction(w http.ResponseWriter, r *http.Request, a app, token, action string, err error) {
	if signedOut(err) {
		setCookie(w, tokenCookie, "", -1, a.secure())
		p.refuseIn(w, r, a, http.StatusUnauthorized, msgSignedOut, "identity refused the page's token: "+status.Code(err).String())
		return
	}
	f := actionFailure(action, err)
	if f.status >= http.StatusInternalServerError {
		p.logCause(r, "account action "+action+" failed", err)
	} else {
		p.logRefusal(r, "identity refused "+action+": "+status.Code(err).String()+fieldNote(err))
	}
	p.retry(w, r, a, token, f)
}

// secondFactor runs the second-factor actions. Their answers are pages, not redirects: the
// enrolment's key and the recovery codes are shown in the answer to the post, and never again.
func (p *Page) secondFactor(w http.ResponseWriter, r *http.Request, a app, token string, in action) {
	var fresh *identityv1.RecoveryCodes
	var err error
	switch in.Action {
	case actionTOTPStart:
		p.enrol(w, r, a, token, failure{status: http.StatusOK})
		return
	case actionTOTPConfirm:
		fresh, err = p.login.ConfirmTotpEnrolment(r.Context(), &identityv1.ConfirmTotpEnrolmentRequest{
			AccessToken: token, Code: in.Code, CurrentPassword: in.Current, ClientIp: login.ClientIP(r, p.trusted),
		})
		if f, again := enrolAgain(err); again {
			p.logRefusal(r, "identity refused the enrolment: "+status.Code(err).String()+fieldNote(err))
			p.enrol(w, r, a, token, f)
			return
		}
	case actionNewRecovery:
		fresh, err = p.login.RegenerateRecoveryCodes(r.Context(), &identityv1.AccountRequest{AccessToken: token})
	case actionPasskeyStart:
		p.createPasskey(w, r, a, token)
		return
	case actionPasskeyFinish:
		fresh, err = p.login.FinishPasskeyRegistration(r.Context(), &identityv1.FinishPasskeyRegistrationRequest{
			AccessToken: token, Credential: in.Passkey, State: in.PasskeyState, CurrentPassword: in.Current, ClientIp: login.ClientIP(r, p.trusted),
		})
		if st := status.Convert(err); err != nil && st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "passkey" {
			p.logRefusal(r, "identity refused the created passkey")
			p.retry(w, r, a, token, failure{status: http.StatusBadRequest, message: msgPasskeyWrong})
			return
		}
		if err == nil && len(fresh.GetCodes()) == 0 {
			// The user had recovery codes already: nothing to show once.
			http.Redirect(w, r, a.pageURL(noticePasskey), http.StatusSeeOther)
			return
		}
	}
	if err != nil {
		p.failAction(w, r, a, token, in.Action, err)
		return
	}
	webpage.SetSecurityHeaders(w.Header(), "", a.Brand.LogoSource())
	p.render(w, r, http.StatusOK, "codes", codesView{app: a, Codes: webpage.RecoveryCodes{Codes: fresh.GetCodes(), Printer: a.Printer}})
}

// createPasskey shows the page whose script asks the browser to create a passkey for the options
// identity made; the form posts the created passkey back.
func (p *Page) createPasskey(w http.ResponseWriter, r *http.Request, a app, token string) {
	ceremony, err := p.login.StartPasskeyRegistration(r.Context(), &identityv1.AccountRequest{AccessToken: token})
	if err != nil {
		p.failAction(w, r, a, token, actionPasskeyStart, err)
		return
	}
	v := passkeyView{app: a, Passkey: webpage.Passkey{Options: ceremony.GetOptions(), State: ceremony.GetState(), Nonce: webpage.NewToken()}, CSRF: csrf.Issue(w, r)}
	webpage.SetSecurityHeaders(w.Header(), "", a.Brand.LogoSource())
	webpage.AllowScript(w.Header(), v.Passkey.Nonce)
	p.render(w, r, http.StatusOK, "passkey", v)
}

// enrol shows the TOTP enrolment: identity starts one, or resumes the one begun minutes ago, so
// a wrong first code shows the same key again.
func (p *Page) enrol(w http.ResponseWriter, r *http.Request, a app, token string, f failure) {
	key, err := p.login.StartTotpEnrolment(r.Context(), &identityv1.AccountRequest{AccessToken: token})
	if err != nil {
		p.failAction(w, r, a, token, actionTOTPStart, err)
		return
	}
	k, err := webpage.NewTOTPKey(key.GetOtpauthUrl(), key.GetSecret(), a.Printer)
	if err != nil {
		p.fail(w, r, err, "render the enrolment's QR code")
		return
	}
	v := enrolView{app: a, Key: k, Message: f.message, CSRF: csrf.Issue(w, r)}
	webpage.SetSecurityHeaders(w.Header(), "", a.Brand.LogoSource())
	login.SetRetryAfter(w.Header(), f.retryAfter)
	p.render(w, r, f.status, "enrol", v)
}

// resend mails the signed-in user a fresh verification through identity's ResendVerification,
// whose limits per address and per client address hold for the page as for the "check your
// inbox" page. The address is the token's user's, never one from the form. The request names the
// account callback without a state, which identity takes as "confirm only": the page's own
// sign-in lives in one browser's 15-minute cookie, so a mail opened later or elsewhere could not
// continue it. A user
// verified meanwhile gets no mail and no notice. done reports that resend has answered (a token
// of another app's page).
func (p *Page) resend(w http.ResponseWriter, r *http.Request, a app, token string) (notice string, done bool, err error) {
	user, err := p.identity.GetMe(withToken(r.Context(), token), &identityv1.GetMeRequest{})
	if err != nil {
		return "", false, err
	}
	if user.GetAppId() != a.ID {
		// The cookie is another app's page's (they share the path): this app's page is signed out.
		p.refuseIn(w, r, a, http.StatusUnauthorized, msgSignedOut, "the page's token belongs to another app")
		return "", true, nil
	}
	if user.GetEmailVerified() {
		return "", false, nil
	}
	_, err = p.login.ResendVerification(r.Context(), &identityv1.ResendVerificationRequest{
		Params: &identityv1.LoginParams{ClientId: a.ID, RedirectUri: a.Callback}, Email: user.GetEmail(), ClientIp: login.ClientIP(r, p.trusted),
	})
	return noticeResent, false, err
}

// parseForm reads a url-encoded body of at most maxForm; when it reports false it has answered.
func (p *Page) parseForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		p.refuse(w, r, http.StatusUnsupportedMediaType, msgBadRequest, "the form is not application/x-www-form-urlencoded")
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			p.refuse(w, r, http.StatusRequestEntityTooLarge, msgBadRequest, "the form is too large")
		} else {
			p.refuse(w, r, http.StatusBadRequest, msgBadRequest, "the form cannot be parsed")
		}
		return nil, false
	}
	// Only the body counts: a query string on the action must not override the fields.
	return r.PostForm, true
}

// retry shows the page again with the failure's message, reading the user and sessions afresh.
func (p *Page) retry(w http.ResponseWriter, r *http.Request, a app, token string, f failure) {
	ctx := withToken(r.Context(), token)
	user, err := p.identity.GetMe(ctx, &identityv1.GetMeRequest{})
	if err != nil {
		p.fail(w, r, err, "read the user")
		return
	}
	v := view{app: a, User: user, Message: f.message}
	if !p.readAccount(w, r, token, &v) {
		return
	}
	login.SetRetryAfter(w.Header(), f.retryAfter)
	p.renderPage(w, r, f.status, v)
}

// withToken is ctx calling identity as the signed-in user, as an app's own call would.
func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, authn.MDAuthorization, "Bearer "+token)
}

// tokenOf is the page's access token from its cookie, "" when there is none usable.
func tokenOf(r *http.Request) string {
	c, err := r.Cookie(tokenCookie)
	if err != nil || !validParam(c.Value) || strings.Count(c.Value, ".") != 2 {
		return ""
	}
	return c.Value
}

// signedOut reports whether identity refused the page's token: expired, or its user frozen or
// deleted. The page then signs in again rather than showing an error.
func signedOut(err error) bool {
	c := status.Code(err)
	return err != nil && (c == codes.Unauthenticated || c == codes.PermissionDenied)
}

// fail answers a failed backend call with the error card, logging the cause of a 5xx.
func (p *Page) fail(w http.ResponseWriter, r *http.Request, err error, what string) {
	f := backendFailure(err)
	if f.status >= http.StatusInternalServerError {
		p.logCause(r, "account page: "+what, err)
	} else {
		p.logRefusal(r, "identity refused to "+what+": "+status.Code(err).String()+fieldNote(err))
	}
	login.SetRetryAfter(w.Header(), f.retryAfter)
	p.renderCard(w, r, f.status, webpage.NewCard(r, msgTitle, f.message))
}

// failSignIn answers a code identity would not exchange: the sign-in is over, start again.
func (p *Page) failSignIn(w http.ResponseWriter, r *http.Request, a app, err error) {
	if err == nil {
		err = errors.New("the token answer holds no token")
	}
	if c := status.Code(err); c == codes.InvalidArgument || c == codes.Unauthenticated || c == codes.PermissionDenied {
		p.refuseIn(w, r, a, http.StatusBadRequest, msgSignIn, "identity refused the code: "+c.String())
		return
	}
	p.fail(w, r, err, "exchange the code")
}

// refuse answers with the neutral error card (the app is unknown or not checked yet).
func (p *Page) refuse(w http.ResponseWriter, r *http.Request, status int, message, reason string) {
	p.logRefusal(r, reason)
	p.renderCard(w, r, status, webpage.NewCard(r, msgTitle, message))
}

// refuseIn answers with the error card in the app's language, linking back to the page.
func (p *Page) refuseIn(w http.ResponseWriter, r *http.Request, a app, status int, message, reason string) {
	p.logRefusal(r, reason)
	p.render(w, r, status, "again", againView{app: a, Title: msgTitle, Message: message, RequestID: reqid.From(r.Context())})
}

func (p *Page) renderSignedOut(w http.ResponseWriter, r *http.Request, a app) {
	p.render(w, r, http.StatusOK, "again", againView{app: a, Title: msgSignedOutTitle, Message: msgSignedOutMessage})
}

func (p *Page) renderPage(w http.ResponseWriter, r *http.Request, status int, v view) {
	v.CSRF = csrf.Issue(w, r)
	webpage.SetSecurityHeaders(w.Header(), "", v.Brand.LogoSource())
	p.render(w, r, status, "page", v)
}

func (p *Page) renderCard(w http.ResponseWriter, r *http.Request, status int, c webpage.Card) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	p.render(w, r, status, "card", c)
}

// render answers with a template of the page; a template failure becomes a plain 500.
func (p *Page) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	if err := webpage.Render(w, pages, status, name, data); err != nil {
		p.logCause(r, "render account page", err)
	}
}

// logCause records why a request failed. Never pass anything that may hold a password or token.
func (p *Page) logCause(r *http.Request, msg string, err error) {
	webpage.LogFailure(p.log, r, msg, err)
}

// logRefusal records at info why the page refused a request, under the request id its card shows.
func (p *Page) logRefusal(r *http.Request, reason string) {
	p.log.InfoContext(r.Context(), "account page refused", slog.String("request_id", reqid.From(r.Context())), slog.String("reason", reason))
}

// fieldNote names the field a refusal is about (" (current_password)"), or is "".
func fieldNote(err error) string {
	if f := grpcx.FieldOf(status.Convert(err)); f != "" {
		return " (" + f + ")"
	}
	return ""
}
