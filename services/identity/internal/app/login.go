package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// LoginLimits bound attempts within sliding windows. Every attempt is reserved in the store before
// its password is hashed (Attempts.ReserveAttempt), so concurrent attempts count each other and a
// limit of n lets exactly n through.
type LoginLimits struct {
	// PerEmailAddress is the strict limit: failed sign-ins per email of an app from one client
	// address (IPv6 addresses count by their /64). It stops guessing one user's password and
	// touches nobody else: the owner on another address keeps every attempt.
	PerEmailAddress int
	// PerEmail is the loose limit: failed sign-ins per email of an app from all addresses together.
	// It caps distributed guessing (many addresses, each under PerIP) against one account; set well
	// above PerEmailAddress so attackers elsewhere need many failures to reach it, and a lock they
	// cause ends at most Window after their failures.
	PerEmail int
	// PerIP is failed sign-ins per client address across all emails (stops spraying many
	// accounts). Sign-ups from an address over it are refused too.
	PerIP int
	// Window is the sliding window of the three sign-in limits.
	Window time.Duration
	// SignUps is sign-up attempts per client address within SignUpWindow: each sign-up creates a
	// user and a tenant, so one address cannot mass-create them.
	SignUps      int
	SignUpWindow time.Duration
	// EmailChanges is changes of one user's email (route 18) within EmailChangeWindow: a refused
	// change tells whether the address is registered, so its rate bounds that probe.
	EmailChanges      int
	EmailChangeWindow time.Duration
	// Resets is password-reset requests per email of an app, and ResetsPerIP per client address
	// across all emails, within ResetWindow: each known address costs a mail, so neither one
	// inbox nor one sender can be flooded. Unknown addresses count alike, so the limit tells
	// nothing about which addresses have an account.
	Resets      int
	ResetsPerIP int
	ResetWindow time.Duration
	// ResendsPerEmail and ResendsPerIP bound the verification mails the "check your inbox" page
	// sends per address of an app and per client address within ResendWindow: enough for a mail
	// that went to spam, too few to flood anyone's inbox.
	ResendsPerEmail int
	ResendsPerIP    int
	ResendWindow    time.Duration
}

// DefaultLoginLimits allow a user many typos but an attacker only a handful of guesses per
// quarter hour; an office behind one address can still sign up ten people an hour.
var DefaultLoginLimits = LoginLimits{
	PerEmailAddress: 10, PerEmail: 100, PerIP: 30, Window: 15 * time.Minute,
	SignUps: 10, SignUpWindow: time.Hour,
	EmailChanges: 5, EmailChangeWindow: 24 * time.Hour,
	Resets: 5, ResetsPerIP: 20, ResetWindow: time.Hour,
	ResendsPerEmail: 5, ResendsPerIP: 20, ResendWindow: time.Hour,
}

// withDefaults fills every unset (zero) limit from DefaultLoginLimits.
func (l LoginLimits) withDefaults() LoginLimits {
	d := DefaultLoginLimits
	for _, f := range []struct {
		v   *int
		def int
	}{{&l.PerEmailAddress, d.PerEmailAddress}, {&l.PerEmail, d.PerEmail}, {&l.PerIP, d.PerIP}, {&l.SignUps, d.SignUps}, {&l.EmailChanges, d.EmailChanges}, {&l.Resets, d.Resets}, {&l.ResetsPerIP, d.ResetsPerIP},
		{&l.ResendsPerEmail, d.ResendsPerEmail}, {&l.ResendsPerIP, d.ResendsPerIP}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&l.Window, d.Window}, {&l.SignUpWindow, d.SignUpWindow}, {&l.EmailChangeWindow, d.EmailChangeWindow}, {&l.ResetWindow, d.ResetWindow}, {&l.ResendWindow, d.ResendWindow}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return l
}

func (l LoginLimits) valid() bool {
	return l.PerEmailAddress > 0 && l.PerEmail > 0 && l.PerIP > 0 && l.Window > 0 &&
		l.SignUps > 0 && l.SignUpWindow > 0 && l.EmailChanges > 0 && l.EmailChangeWindow > 0 &&
		l.Resets > 0 && l.ResetsPerIP > 0 && l.ResetWindow > 0 &&
		l.ResendsPerEmail > 0 && l.ResendsPerIP > 0 && l.ResendWindow > 0
}

// LoginParams are the authorization request's values, carried by the hosted page through its form.
// Referral is the referral code of an invite link (route 23); only sign-up reads it.
type LoginParams struct {
	ClientID, RedirectURI, State, Nonce, Scope string
	Referral                                   string
	// Service names how the user proved who they are, for the redirect's service parameter: ""
	// is "email" (a password or a mailed code), else the identity-provider slot (idpA…idpD).
	Service string
}

// SignUpInput is a sign-up form.
type SignUpInput struct {
	Params                LoginParams
	Email, Password, Name string
	ClientIP              string // the end user's address as the edge saw it
	UserAgent             string // the browser's User-Agent, kept with the session
}

// SignInInput is a sign-in form.
type SignInInput struct {
	Params          LoginParams
	Email, Password string
	ClientIP        string
	UserAgent       string
}

// Answers of sign-up and sign-in failures. They are deliberately generic: neither may tell whether
// an address has an account.
var (
	errSignUp      = fault.Invalid("", "could not sign up with these details")
	errCredentials = fault.Invalid("", "invalid email or password")
)

// loginApp checks an authorization request: a known app and a redirect URI registered for it, or
// the deployment's account-page callback (AccountCallbackPath). The app may be disabled; each
// caller decides how to answer that, and both refuse a disabled one.
func (s *Service) loginApp(ctx context.Context, p LoginParams) (domain.App, error) {
	id := domain.CanonicalID(strings.TrimSpace(p.ClientID))
	if !domain.IsUUID(id) {
		return domain.App{}, fault.Invalid("client_id", "unknown client_id")
	}
	a, err := s.store.GetApp(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.App{}, fault.Invalid("client_id", "unknown client_id")
	}
	if err != nil {
		return domain.App{}, err
	}
	if !a.RegisteredRedirect(p.RedirectURI) && !s.accountCallback(p.RedirectURI) {
		return domain.App{}, fault.Invalid("redirect_uri", "redirect_uri is not registered for this app")
	}
	if err := domain.CheckAuthorizationParams(p.State, p.Nonce, p.Scope); err != nil {
		return domain.App{}, err
	}
	return a, nil
}

// DescribeLogin checks an authorization request before the hosted page shows its form. Every
// problem is InvalidArgument, a disabled app included: the page shows an error and never
// redirects to an address it could not vouch for.
func (s *Service) DescribeLogin(ctx context.Context, clientID, redirectURI string) (domain.App, error) {
	a, err := s.loginApp(ctx, LoginParams{ClientID: clientID, RedirectURI: redirectURI})
	if err != nil {
		return domain.App{}, err
	}
	if !a.Enabled {
		return domain.App{}, fault.Invalid("client_id", "this app is disabled")
	}
	return a, nil
}

// enabledLoginApp is loginApp for the form submissions, where a disabled app is PermissionDenied.
func (s *Service) enabledLoginApp(ctx context.Context, p LoginParams) (domain.App, error) {
	a, err := s.loginApp(ctx, p)
	if err != nil {
		return domain.App{}, err
	}
	if !a.Enabled {
		return domain.App{}, fault.Forbidden("App Is Disabled")
	}
	return a, nil
}

// SignUp creates a user with a password and a tenant of its own (named after the email). A valid
// referral code of the app records the inviter as the user's referrer; any other code is ignored.
//
// Under the app's optional verification policy it signs the user in at once (the outcome's URL)
// and mails a link that verifies the address later; an address that already has an account gets
// the same answer as other refused details, which tells the visitor it is registered. Under the
// required policy it never signs in: a new address gets a verification mail, a registered one a
// mail saying someone tried to sign up with it, and both get the same outcome (a verification
// id) after the same steps: a password hash, a verification minted, one mail sent. What still
// differs is that only a new address stores its user, tenant and verification.
//
// The tenant is created before the user: if the user then cannot be stored (two sign-ups racing
// for one address), the tenant stays without users, which the tenant service treats like any
// tenant whose users were deleted.
func (s *Service) SignUp(ctx context.Context, in SignUpInput) (LoginOutcome, error) {
	a, err := s.enabledLoginApp(ctx, in.Params)
	if err != nil {
		return LoginOutcome{}, err
	}
	if verificationRequired(a) {
		if err := s.mailReady(); err != nil {
			return LoginOutcome{}, err
		}
	}
	ip := clientIP(in.ClientIP)
	if err := domain.CheckUserAgent(in.UserAgent); err != nil {
		return LoginOutcome{}, err
	}
	email := strings.TrimSpace(in.Email)
	if !domain.IsEmail(email) {
		return LoginOutcome{}, fault.Invalid("email", "must be a valid email address")
	}
	if err := password.Check(in.Password, email); err != nil {
		return LoginOutcome{}, err // an Invalid fault on the password naming the rule (its reason)
	}
	// Every sign-up that gets as far as hashing counts against its address, whatever its outcome:
	// a refused one probes whether an address is registered, a successful one creates a user and a
	// tenant. An address over its sign-in failure limit may not sign up either.
	attempt, err := s.reserve(ctx, signUpLimits(s.limits, s.now(), addressKey(ip))...)
	if err != nil {
		return LoginOutcome{}, err
	}
	// Hashing before the lookup keeps the time of a refused address close to that of a new one.
	hash, err := s.hash(ctx, in.Password)
	if err != nil {
		s.release(ctx, attempt) // refused before any work: it was no attempt
		return LoginOutcome{}, err
	}
	existing, err := s.store.GetUserByEmail(ctx, a.ID, email)
	if verificationRequired(a) {
		defer s.answerNoSoonerThan(ctx, time.Now().Add(s.answerAt))
	}
	switch {
	case err == nil && !existing.Deleted && verificationRequired(a):
		return s.signUpTaken(ctx, a, existing, in.Params)
	case err == nil && !existing.Deleted:
		return LoginOutcome{}, errSignUp
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return LoginOutcome{}, err
	}
	name := strings.TrimSpace(in.Name)
	u, err := s.newSignUpUser(ctx, a, domain.UserPatch{Email: &email, Name: &name}, false, in.Params.Referral)
	if err != nil {
		return LoginOutcome{}, err
	}
	u.PasswordHash = hash
	if err := s.createUser(ctx, u); err != nil {
		if errors.Is(err, domain.ErrEmailTaken) {
			return LoginOutcome{}, errSignUp
		}
		return LoginOutcome{}, err
	}
	if verificationRequired(a) {
		id, err := s.sendVerification(ctx, a, u, in.Params.continuation())
		if err != nil {
			return LoginOutcome{}, err
		}
		return LoginOutcome{Verification: id}, nil
	}
	// Optional policy: the mail only confirms the address (it continues nothing); without a
	// mailer the user simply stays unverified, as before the policy existed.
	if s.mailReady() == nil {
		if _, err := s.sendVerification(ctx, a, u, domain.Continuation{}); err != nil {
			slog.WarnContext(ctx, "verification mail after sign-up", slog.String("error", err.Error()))
		}
	}
	return s.afterFirstFactor(ctx, a, u, in.Params, browser{ip: ip, userAgent: in.UserAgent}, domain.AMRPassword)
}

// DefaultSignUpAnswerTime is the identity server's Config.SignUpAnswerTime: well above what a new
// address costs after the lookup (a few milliseconds; tens with a slow mail server), so both
// outcomes answer at this time unless the machine is overloaded.
const DefaultSignUpAnswerTime = 250 * time.Millisecond

// answerNoSoonerThan waits until at (or until ctx ends). Under the required verification policy
// a sign-up answers the same page for a new and a registered address, and what follows the lookup
// costs a new address far more (a tenant created over gRPC, the user's and the challenge's rows)
// than a registered one (one mail): both answer at the same time after the lookup instead, so the
// answer's time tells no more than its page. Hashing comes before the lookup and costs both the
// same, so its variance under load is not padded.
func (s *Service) answerNoSoonerThan(ctx context.Context, at time.Time) {
	wait := time.Until(at)
	if s.answerAt <= 0 || wait <= 0 {
		return
	}
	select {
	case <-s.after(wait):
	case <-ctx.Done():
	}
}

// newSignUpUser builds the user a sign-up creates (not stored yet) and creates its tenant, named
// after the email. A valid referral code of the app records the inviter as the user's referrer;
// any other code is ignored. Password sign-ups and first sign-ins through a provider share it.
func (s *Service) newSignUpUser(ctx context.Context, a domain.App, profile domain.UserPatch, verified bool, referral string) (domain.User, error) {
	u, err := domain.NewUser(a.ID, "", profile, verified, s.now())
	if err != nil {
		return domain.User{}, err
	}
	if u.ReferredBy, err = s.referrer(ctx, a.ID, strings.TrimSpace(referral)); err != nil {
		return domain.User{}, err
	}
	if s.tenants == nil {
		return domain.User{}, fault.Unavailable(0, "sign-up is not available")
	}
	tenantID, err := s.tenants.CreateTenant(ctx, a.ID, u.Email)
	if err != nil {
		return domain.User{}, fault.Internal(fmt.Errorf("create tenant: %w", err))
	}
	u.TenantID = domain.CanonicalID(tenantID)
	return u, nil
}

// maxPasswordBytes bounds what sign-in hashes: longer input cannot be a valid password (MaxLength
// runes of at most 4 bytes), so it is refused without spending a hash on it.
const maxPasswordBytes = 4 * password.MaxLength

// SignIn checks an email and password and issues an authorization code. Unknown addresses and
// wrong passwords get one answer in about the same time; frozen and deleted users are told so
// only once they proved their password.
func (s *Service) SignIn(ctx context.Context, in SignInInput) (LoginOutcome, error) {
	a, err := s.enabledLoginApp(ctx, in.Params)
	if err != nil {
		return LoginOutcome{}, err
	}
	ip := clientIP(in.ClientIP)
	if err := domain.CheckUserAgent(in.UserAgent); err != nil {
		return LoginOutcome{}, err
	}
	u, keys, err := s.passwordUser(ctx, a, in.Email, in.Password, ip)
	if err != nil {
		return LoginOutcome{}, err
	}
	if verificationRequired(a) && !u.EmailVerified {
		if err := s.clearSignInFailures(ctx, keys); err != nil {
			return LoginOutcome{}, err
		}
		return s.signInUnverified(ctx, a, u, in.Params, ip)
	}
	out, err := s.afterFirstFactor(ctx, a, u, in.Params, browser{ip: ip, userAgent: in.UserAgent}, domain.AMRPassword)
	if err != nil || out.SecondFactor != "" {
		// A sign-in that still needs its second factor keeps the failures counted: wrong codes
		// count under the same keys, and a right password must not wipe them, or it would buy a
		// fresh allowance of code guesses each time.
		return out, err
	}
	return out, s.clearSignInFailures(ctx, keys)
}

// clearSignInFailures resets the email's counts (strict and loose) after a successful sign-in, so
// the owner gets a full allowance of typos again.
func (s *Service) clearSignInFailures(ctx context.Context, keys signInKeys) error {
	for _, k := range []string{keys.pair, keys.email} {
		if err := s.store.ClearAttempts(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// passwordUser returns the active user of the app whose email and password these are, under the
// sign-in attempt limits of the email and the client address ip, and the keys of those limits.
// Sign-in and the confirmation of a provider link prove a password through it. It leaves the
// email's failures counted: the caller clears them (clearSignInFailures) once the whole sign-in,
// a second factor included, succeeded.
func (s *Service) passwordUser(ctx context.Context, a domain.App, email, password, ip string) (domain.User, signInKeys, error) {
	email = strings.TrimSpace(email)
	keys := signInKeysOf(a.ID, email, addressKey(ip))
	// The attempt counts as a failure from here on; a correct password releases it. Reserving it
	// before hashing is what makes parallel guesses count each other.
	attempt, err := s.reserve(ctx, signInLimits(s.limits, s.now(), keys)...)
	if err != nil {
		return domain.User{}, keys, err
	}
	if len(password) > maxPasswordBytes {
		return domain.User{}, keys, errCredentials
	}
	u, err := s.store.GetUserByEmail(ctx, a.ID, email)
	if errors.Is(err, domain.ErrNotFound) {
		if err := s.burn(ctx, password); err != nil {
			s.release(ctx, attempt)
			return domain.User{}, keys, err
		}
		return domain.User{}, keys, errCredentials
	}
	if err != nil {
		s.release(ctx, attempt)
		return domain.User{}, keys, err
	}
	// A user without a password (provisioned by an operator) fails here too: Verify never matches
	// an empty hash but spends the same time.
	ok, err := s.verify(ctx, u.PasswordHash, password)
	if err != nil {
		s.release(ctx, attempt)
		return domain.User{}, keys, err
	}
	if !ok {
		return domain.User{}, keys, errCredentials
	}
	if err := s.store.ReleaseAttempt(ctx, attempt); err != nil {
		return domain.User{}, keys, err
	}
	if err := inactive(u); err != nil {
		return domain.User{}, keys, err
	}
	return u, keys, nil
}

// signInUnverified answers the right password of an unverified user under the required policy:
// no sign-in, but a fresh verification mail continuing this request and the "check your inbox"
// outcome, the page sign-up shows. The mail counts against the resend limits, so the password's
// owner cannot flood the inbox either.
func (s *Service) signInUnverified(ctx context.Context, a domain.App, u domain.User, p LoginParams, ip string) (LoginOutcome, error) {
	if err := s.mailReady(); err != nil {
		return LoginOutcome{}, err
	}
	if _, err := s.reserve(ctx, resendLimits(s.limits).of(s.now(), a.ID, u.Email, addressKey(ip))...); err != nil {
		return LoginOutcome{}, err
	}
	id, err := s.sendVerification(ctx, a, u, p.continuation())
	if err != nil {
		return LoginOutcome{}, err
	}
	return LoginOutcome{Verification: id}, nil
}

// inactive is the PermissionDenied answer for a frozen or deleted user, nil for an active one.
func inactive(u domain.User) error {
	switch {
	case u.Deleted:
		return fault.Forbidden("this account was deleted")
	case u.Frozen:
		return fault.Forbidden("this account is frozen")
	}
	return nil
}

// browser is the client of a sign-in as the hosted page saw it.
type browser struct {
	ip, userAgent string
}

// completeSignIn records the sign-in (with its event) and issues the authorization code, which
// carries the browser and the sign-in's authentication methods (amr) on to the session its
// exchange starts.
func (s *Service) completeSignIn(ctx context.Context, a domain.App, u domain.User, p LoginParams, b browser, amr []string) (string, error) {
	now := s.now()
	_, err := s.store.UpdateUser(ctx, a.ID, u.ID, func(x *domain.User) ([]events.Event, error) {
		if err := x.RecordSignIn(now, b.ip); err != nil {
			return nil, err
		}
		return event(identityv1.EventUserSignedIn, x.AppID, &identityv1.UserSignedIn{
			AppId: x.AppID, UserId: x.ID, TenantRef: x.TenantID, At: convert.Timestamp(now), Ip: b.ip, User: convert.TenantUser(*x),
		})
	})
	if errors.Is(err, domain.ErrUserInactive) {
		return "", fault.Forbidden("this account cannot sign in")
	}
	if err != nil {
		return "", err
	}
	code, hash, err := domain.NewSecret()
	if err != nil {
		return "", err
	}
	if err := s.store.CreateAuthCode(ctx, domain.AuthCode{
		Hash: hash, AppID: a.ID, UserID: u.ID, RedirectURI: p.RedirectURI, Nonce: p.Nonce, Scope: p.Scope,
		AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(domain.AuthCodeTTL), ClientIP: b.ip, UserAgent: b.userAgent, AMR: amr,
	}); err != nil {
		return "", err
	}
	return redirectURL(p, code, a.ID)
}

// redirectURL is redirect_uri?code&state&service&client_id (+ nonce and scope when given), service
// "email" or the provider's slot (LoginParams.Service),
// keeping any query the redirect URI already has.
func redirectURL(p LoginParams, code, appID string) (string, error) {
	u, err := url.Parse(p.RedirectURI)
	if err != nil {
		return "", fmt.Errorf("registered redirect URI does not parse: %w", err)
	}
	q := u.Query()
	q.Set("code", code)
	q.Set("state", p.State)
	q.Set("service", cmp.Or(p.Service, "email"))
	q.Set("client_id", appID)
	if p.Nonce != "" {
		q.Set("nonce", p.Nonce)
	}
	if p.Scope != "" {
		q.Set("scope", p.Scope)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// clientIP normalises the address the edge reports. It is stored and limits are keyed by it, so
// one address must always read the same; anything that is not an IP address is dropped.
func clientIP(s string) string {
	addr, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return ""
	}
	return addr.Unmap().String()
}

// addressKey is the part of a limit key that names the client address: an IPv4 address as it is,
// an IPv6 address by its /64 (one subscriber usually holds a whole /64, so counting single
// addresses would give an attacker 2^64 fresh ones). "" when the address is unknown.
func addressKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	if addr.Is6() {
		p, err := addr.Prefix(64)
		if err != nil {
			return ""
		}
		return p.String()
	}
	return addr.String()
}

// signInKeys are the limit keys of one sign-in attempt.
type signInKeys struct {
	pair  string // email of the app from this address (strict)
	email string // email of the app from anywhere (loose)
	ip    string // this address, any email; "" when the address is unknown
}

func signInKeysOf(appID, email, address string) signInKeys {
	e := appID + ":" + strings.ToLower(email)
	k := signInKeys{pair: "pair:" + e + ":" + address, email: "email:" + e}
	if address != "" {
		k.ip = "ip:" + address
	}
	return k
}

// limit is one attempt limit with the window that becomes the retry-after when it is reached.
type limit struct {
	AttemptLimit
	window  time.Duration
	refusal func(window time.Duration) error
}

func newLimit(key string, maxAttempts int, window time.Duration, now time.Time, refusal func(time.Duration) error) limit {
	return limit{AttemptLimit: AttemptLimit{Key: key, Max: maxAttempts, Since: now.Add(-window)}, window: window, refusal: refusal}
}

// mailLimits bound the mails one kind of request sends (verification resends, password resets):
// per address of an app, so one inbox cannot be flooded, and per client address, so one sender
// cannot flood many.
type mailLimits struct {
	kind            string // the limit keys' prefix
	perEmail, perIP int
	window          time.Duration
	refusal         func(window time.Duration) error
}

// of counts a request for email of appID from address ("" when unknown: then only the address of
// the app counts).
func (m mailLimits) of(now time.Time, appID, email, address string) []limit {
	out := []limit{newLimit(m.kind+":email:"+appID+":"+strings.ToLower(email), m.perEmail, m.window, now, m.refusal)}
	if address != "" {
		out = append(out, newLimit(m.kind+":ip:"+address, m.perIP, m.window, now, m.refusal))
	}
	return out
}

func signInLimits(l LoginLimits, now time.Time, k signInKeys) []limit {
	out := []limit{
		newLimit(k.pair, l.PerEmailAddress, l.Window, now, errTooMany),
		newLimit(k.email, l.PerEmail, l.Window, now, errTooMany),
	}
	if k.ip != "" {
		out = append(out, newLimit(k.ip, l.PerIP, l.Window, now, errTooMany))
	}
	return out
}

// signUpLimits count the sign-up under its address and check (without counting) the address's
// sign-in failures. A sign-up of an unknown address is not limited: the hosted page always knows
// it.
func signUpLimits(l LoginLimits, now time.Time, address string) []limit {
	if address == "" {
		return nil
	}
	failures := newLimit("ip:"+address, l.PerIP, l.Window, now, errTooMany)
	failures.CheckOnly = true
	return []limit{newLimit("signup:"+address, l.SignUps, l.SignUpWindow, now, errTooManySignUps), failures}
}

// errTooMany is the answer once a sign-in limit is reached. The message tells the user what to do;
// the window is the retry-after, an upper bound (the oldest counted failure may leave it sooner),
// which the hosted page sends as Retry-After.
func errTooMany(window time.Duration) error {
	return fault.Exhausted(window, "too many failed sign-in attempts; try again in %d minutes", int(window.Minutes()))
}

func errTooManySignUps(window time.Duration) error {
	return fault.Exhausted(window, "too many sign-ups from this address; try again in %d minutes", int(window.Minutes()))
}

// reserve records one attempt under every limit's key, or returns the refusal of the first limit
// already reached. It returns the attempt's id ("" when there were no limits), for release.
func (s *Service) reserve(ctx context.Context, limits ...limit) (string, error) {
	if len(limits) == 0 {
		return "", nil
	}
	id := uuid.NewString()
	ls := make([]AttemptLimit, len(limits))
	for i, l := range limits {
		ls[i] = l.AttemptLimit
	}
	reached, err := s.store.ReserveAttempt(ctx, id, s.now(), ls...)
	if err != nil {
		return "", err
	}
	if reached >= 0 && reached < len(limits) {
		return "", limits[reached].refusal(limits[reached].window)
	}
	return id, nil
}

// release forgets an attempt that turned out not to count (the request failed before its work).
// Failing to forget it only leaves one attempt too many counted, so the error is logged, not
// returned over the request's own answer.
func (s *Service) release(ctx context.Context, id string) {
	if id == "" {
		return
	}
	if err := s.store.ReleaseAttempt(context.WithoutCancel(ctx), id); err != nil {
		slog.ErrorContext(ctx, "release attempt", slog.String("error", err.Error()))
	}
}
