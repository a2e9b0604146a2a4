package app

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// LoginLimits bound failed sign-ins within a sliding window: per email address of an app (stops
// guessing one user's password) and per client address (stops spraying many accounts).
type LoginLimits struct {
	PerEmail, PerIP int
	Window          time.Duration
}

// DefaultLoginLimits allow a user many typos but an attacker only a handful of guesses per hour.
var DefaultLoginLimits = LoginLimits{PerEmail: 10, PerIP: 30, Window: 15 * time.Minute}

// LoginParams are the authorization request's values, carried by the hosted page through its form.
// Referral is the referral code of an invite link (route 23); only sign-up reads it.
type LoginParams struct {
	ClientID, RedirectURI, State, Nonce, Scope string
	Referral                                   string
}

// SignUpInput is a sign-up form.
type SignUpInput struct {
	Params                LoginParams
	Email, Password, Name string
	ClientIP              string // the end user's address as the edge saw it
}

// SignInInput is a sign-in form.
type SignInInput struct {
	Params          LoginParams
	Email, Password string
	ClientIP        string
}

// Answers of sign-up and sign-in failures. They are deliberately generic: neither may tell whether
// an address has an account.
var (
	errSignUp      = fault.Invalid("", "could not sign up with these details")
	errCredentials = fault.Invalid("", "invalid email or password")
)

// loginApp checks an authorization request: a known app and a redirect URI registered for it. The
// app may be disabled; each caller decides how to answer that.
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
	if !a.RegisteredRedirect(p.RedirectURI) {
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

// SignUp creates a user with a password and a tenant of its own (named after the email), then
// signs the user in. It returns the URL to send the browser to. A valid referral code of the app
// records the inviter as the user's referrer; any other code is ignored.
//
// An address that already has an account gets the same answer as other refused details. The
// tenant is created before the user: if the user then cannot be stored (two sign-ups racing for
// one address), the tenant stays without users, which the tenant service treats like any tenant
// whose users were deleted.
func (s *Service) SignUp(ctx context.Context, in SignUpInput) (string, error) {
	a, err := s.enabledLoginApp(ctx, in.Params)
	if err != nil {
		return "", err
	}
	ip := clientIP(in.ClientIP)
	ipKey := ipLimitKey(ip)
	if err := s.checkLimits(ctx, "", ipKey); err != nil {
		return "", err
	}
	email := strings.TrimSpace(in.Email)
	if !domain.IsEmail(email) {
		return "", fault.Invalid("email", "must be a valid email address")
	}
	if err := password.Check(in.Password); err != nil {
		return "", err // an Invalid fault on the password naming the rule
	}
	// Hashing before the lookup keeps the time of a refused address close to that of a new one.
	hash, err := s.passwords.Hash(in.Password)
	if err != nil {
		return "", err
	}
	existing, err := s.store.GetUserByEmail(ctx, a.ID, email)
	switch {
	case err == nil && !existing.Deleted:
		// Counted against the address: probing addresses through sign-up is throttled like sign-in.
		if err := s.recordFailure(ctx, ipKey); err != nil {
			return "", err
		}
		return "", errSignUp
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return "", err
	}
	name := strings.TrimSpace(in.Name)
	u, err := domain.NewUser(a.ID, "", domain.UserPatch{Email: &email, Name: &name}, false, s.now())
	if err != nil {
		return "", err
	}
	if u.ReferredBy, err = s.referrer(ctx, a.ID, strings.TrimSpace(in.Params.Referral)); err != nil {
		return "", err
	}
	if s.tenants == nil {
		return "", fault.Unavailable(0, "sign-up is not available")
	}
	tenantID, err := s.tenants.CreateTenant(ctx, a.ID, email)
	if err != nil {
		return "", fault.Internal(fmt.Errorf("create tenant: %w", err))
	}
	u.TenantID, u.PasswordHash = domain.CanonicalID(tenantID), hash
	if err := s.store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, domain.ErrEmailTaken) {
			return "", errSignUp
		}
		return "", err
	}
	return s.completeSignIn(ctx, a, u, in.Params, ip)
}

// maxPasswordBytes bounds what sign-in hashes: longer input cannot be a valid password (MaxLength
// runes of at most 4 bytes), so it is refused without spending a hash on it.
const maxPasswordBytes = 4 * password.MaxLength

// SignIn checks an email and password and issues an authorization code. Unknown addresses and
// wrong passwords get one answer in about the same time; frozen and deleted users are told so
// only once they proved their password.
func (s *Service) SignIn(ctx context.Context, in SignInInput) (string, error) {
	a, err := s.enabledLoginApp(ctx, in.Params)
	if err != nil {
		return "", err
	}
	ip := clientIP(in.ClientIP)
	email := strings.TrimSpace(in.Email)
	emailKey, ipKey := "email:"+a.ID+":"+strings.ToLower(email), ipLimitKey(ip)
	if err := s.checkLimits(ctx, emailKey, ipKey); err != nil {
		return "", err
	}
	if len(in.Password) > maxPasswordBytes {
		return "", s.failSignIn(ctx, emailKey, ipKey)
	}
	u, err := s.store.GetUserByEmail(ctx, a.ID, email)
	if errors.Is(err, domain.ErrNotFound) {
		s.passwords.Burn(in.Password)
		return "", s.failSignIn(ctx, emailKey, ipKey)
	}
	if err != nil {
		return "", err
	}
	// A user without a password (provisioned by an operator) fails here too: Verify never matches
	// an empty hash but spends the same time.
	if !s.passwords.Verify(u.PasswordHash, in.Password) {
		return "", s.failSignIn(ctx, emailKey, ipKey)
	}
	if err := inactive(u); err != nil {
		return "", err
	}
	if err := s.store.ClearLoginFailures(ctx, emailKey); err != nil {
		return "", err
	}
	return s.completeSignIn(ctx, a, u, in.Params, ip)
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

// failSignIn records a failed attempt and returns the generic answer.
func (s *Service) failSignIn(ctx context.Context, keys ...string) error {
	if err := s.recordFailure(ctx, keys...); err != nil {
		return err
	}
	return errCredentials
}

// completeSignIn records the sign-in (with its event) and issues the authorization code.
func (s *Service) completeSignIn(ctx context.Context, a domain.App, u domain.User, p LoginParams, ip string) (string, error) {
	now := s.now()
	_, err := s.store.UpdateUser(ctx, a.ID, u.ID, func(x *domain.User) ([]events.Event, error) {
		if err := x.RecordSignIn(now, ip); err != nil {
			return nil, err
		}
		return event(identityv1.EventUserSignedIn, x.AppID, &identityv1.UserSignedIn{
			AppId: x.AppID, UserId: x.ID, TenantRef: x.TenantID, At: convert.Timestamp(now), Ip: ip, User: convert.TenantUser(*x),
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
		AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(domain.AuthCodeTTL),
	}); err != nil {
		return "", err
	}
	return redirectURL(p, code, a.ID)
}

// redirectURL is redirect_uri?code&state&service=email&client_id (+ nonce and scope when given),
// keeping any query the redirect URI already has.
func redirectURL(p LoginParams, code, appID string) (string, error) {
	u, err := url.Parse(p.RedirectURI)
	if err != nil {
		return "", fmt.Errorf("registered redirect URI does not parse: %w", err)
	}
	q := u.Query()
	q.Set("code", code)
	q.Set("state", p.State)
	q.Set("service", "email")
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

func ipLimitKey(ip string) string {
	if ip == "" {
		return ""
	}
	return "ip:" + ip
}

// errTooMany is the answer once a limit is reached. The message tells the user what to do; the
// window is the retry-after, an upper bound (the oldest counted failure may leave it sooner), which
// the hosted page sends as Retry-After.
func errTooMany(window time.Duration) error {
	return fault.Exhausted(window, "too many failed sign-in attempts; try again in %d minutes", int(window.Minutes()))
}

// checkLimits refuses the attempt when the email's or the address's failures within the window
// reached their limit. Empty keys are not checked.
func (s *Service) checkLimits(ctx context.Context, emailKey, ipKey string) error {
	since := s.now().Add(-s.limits.Window)
	for _, l := range []struct {
		key   string
		limit int
	}{{emailKey, s.limits.PerEmail}, {ipKey, s.limits.PerIP}} {
		if l.key == "" {
			continue
		}
		n, err := s.store.CountLoginFailures(ctx, l.key, since)
		if err != nil {
			return err
		}
		if n >= l.limit {
			return errTooMany(s.limits.Window)
		}
	}
	return nil
}

// recordFailure counts a failure under every non-empty key.
func (s *Service) recordFailure(ctx context.Context, keys ...string) error {
	var set []string
	for _, k := range keys {
		if k != "" {
			set = append(set, k)
		}
	}
	if len(set) == 0 {
		return nil
	}
	now := s.now()
	return s.store.RecordLoginFailure(ctx, now, now.Add(-s.limits.Window), set...)
}
