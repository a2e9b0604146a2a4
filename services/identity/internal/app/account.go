package app

import (
	"context"
	"errors"
	"strings"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// AccountCallbackPath is where the edge's hosted account page receives the code of its own
// sign-in. The URI under the deployment's public URL is a registered redirect URI of every
// enabled app (accountCallback): the code lands on the deployment's own page, which exchanges it
// on the server and keeps the access token in an HttpOnly cookie, so no app's registration could
// tighten anything by leaving it out.
const AccountCallbackPath = "/account/callback"

// AccountCallbackURI is the deployment's account-page callback, "" when no public URL is set
// (then no account page can sign in).
func (s *Service) AccountCallbackURI() string {
	if s.publicURL == "" {
		return ""
	}
	return s.publicURL + AccountCallbackPath
}

// accountCallback reports whether uri is the deployment's account-page callback (one trailing "/"
// aside, as for the registered redirect URIs).
func (s *Service) accountCallback(uri string) bool {
	cb := s.AccountCallbackURI()
	return cb != "" && uri != "" && domain.TrimSlash(uri) == cb
}

// DescribeAccount checks the app of the hosted account page: known and enabled. Every problem is
// InvalidArgument, as for DescribeLogin: the page answers with its error card.
func (s *Service) DescribeAccount(ctx context.Context, clientID string) (domain.App, error) {
	if s.AccountCallbackURI() == "" {
		return domain.App{}, fault.Unavailable(0, "the account page needs the deployment's public URL")
	}
	return s.DescribeLogin(ctx, clientID, s.AccountCallbackURI())
}

// checkCurrentPassword checks the signed-in user's password like a sign-in, under the same
// attempt limits, so a stolen access token cannot be used to guess it faster than the sign-in
// page allows; a wrong one is errCurrentPassword.
func (s *Service) checkCurrentPassword(ctx context.Context, u domain.User, current, ip string) error {
	keys := signInKeysOf(u.AppID, u.Email, addressKey(clientIP(ip)))
	return s.checkCurrent(ctx, keys, u.PasswordHash, current)
}

// checkCurrent is checkPassword of a known hash, answering errCurrentPassword when it does not
// match and clearing the failures under keys when it does.
func (s *Service) checkCurrent(ctx context.Context, keys signInKeys, phc, current string) error {
	err := s.checkPassword(ctx, keys, current, func() (string, error) { return phc, nil })
	if errors.Is(err, errCredentials) {
		return errCurrentPassword
	}
	if err != nil {
		return err
	}
	return s.clearSignInFailures(ctx, keys)
}

// DescribeApp answers a known app, enabled or not, for the hosted pages that carry only its id
// (the payment pages show its name and branding). An unknown or malformed id is InvalidArgument,
// as for DescribeLogin.
func (s *Service) DescribeApp(ctx context.Context, clientID string) (domain.App, error) {
	id := domain.CanonicalID(strings.TrimSpace(clientID))
	if !domain.IsUUID(id) {
		return domain.App{}, fault.Invalid("client_id", "unknown client_id")
	}
	a, err := s.store.GetApp(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.App{}, fault.Invalid("client_id", "unknown client_id")
	}
	return a, err
}

// ChangedReason is the reason of the password-changed event a signed-in change emits.
const ChangedReason = "changed"

// PasswordChange is the account page's password form with the signed-in user's access token.
type PasswordChange struct {
	AccessToken, Current, New string
	ClientIP                  string
}

// errCurrentPassword answers a wrong current password. It names the field, so the page can say
// which input to fix: the caller is signed in as the user, so nothing about the account leaks.
var errCurrentPassword = fault.Invalid("current_password", "the current password is wrong")

// ChangePassword replaces the password of the token's user. The new password must follow the
// sign-up's rules (checked first, so a refused one costs no attempt); the current one is checked
// like a sign-in, under the same attempt limits, so a stolen access token cannot be used to guess
// it faster than the sign-in page allows. Every session of the user on the app then ends: the
// account page holds none of its own (its sign-in's session is ended at once), so these are all
// the other ones, whoever holds them with the old password. The new hash,
// identity.user.password_changed (reason "changed"), the revocation and identity.sessions.revoked
// (reason "password_changed") are one store write: a sign-in with the old password can never
// open a session that survives the change.
func (s *Service) ChangePassword(ctx context.Context, in PasswordChange) error {
	v, err := s.VerifyToken(ctx, in.AccessToken)
	if err != nil {
		return err
	}
	u, err := s.store.GetUser(ctx, v.AppID, v.UserID)
	if err != nil {
		return err
	}
	if err := password.Check(in.New, u.Email); err != nil {
		return err // an Invalid fault on the password naming the rule (its reason)
	}
	if err := s.checkCurrentPassword(ctx, u, in.Current, in.ClientIP); err != nil {
		return err
	}
	hash, err := s.hash(ctx, in.New)
	if err != nil {
		return err
	}
	now := s.now()
	_, err = s.store.UpdateUserEndingSessions(ctx, u.AppID, u.ID, now, func(x *domain.User) ([]events.Event, error) {
		if err := x.ChangePassword(hash, now); err != nil {
			return nil, err
		}
		return event(identityv1.EventUserPasswordChanged, x.AppID, &identityv1.UserPasswordChanged{
			AppId: x.AppID, UserId: x.ID, TenantRef: x.TenantID, At: convert.Timestamp(now), Reason: ChangedReason,
		})
	}, sessionsRevoked(u.AppID, u.ID, domain.RevokedPasswordChanged, true, now))
	if errors.Is(err, domain.ErrUserInactive) {
		return fault.Forbidden("this account cannot change its password")
	}
	return err
}
