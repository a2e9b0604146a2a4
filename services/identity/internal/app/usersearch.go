package app

import (
	"context"
	"strings"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// UserPage is one page of a user search and the cursor of the next ("" on the last).
type UserPage struct {
	Users []domain.User
	Next  string
}

// UserKey is a user's position in a search: the email lower-cased, as addresses are compared
// (users_app_email), then the id.
func UserKey(u domain.User) keyset.Key {
	return keyset.Key{Text: strings.ToLower(u.Email), ID: u.ID}
}

// SearchUsers is the console's user search: the app's users that are not deleted, by email prefix
// (case-insensitive) or exact id, a page at a time with a keyset cursor (package keyset).
func (s *Service) SearchUsers(ctx context.Context, appID, query string, pageSize int32, after string) (UserPage, error) {
	a, err := s.ownerApp(ctx, appID)
	if err != nil {
		return UserPage{}, err
	}
	q, size, err := keyset.ParseSearch(query, pageSize, after)
	if err != nil {
		return UserPage{}, err
	}
	users, err := s.store.SearchUsers(ctx, a.ID, q)
	if err != nil {
		return UserPage{}, err
	}
	users, next := keyset.Page(users, size, UserKey)
	return UserPage{Users: users, Next: next}, nil
}

// UserDetail is everything the console shows of one user; none of it is a secret.
type UserDetail struct {
	User domain.User
	// Sessions are the live refresh families, the most recently used first (MaxListedSessions).
	Sessions []domain.RefreshFamily
	Links    []domain.ProviderLink
	// Factors are the second factors, pending and confirmed, oldest first; their sealed secrets
	// are dropped here, so no layer above can show one.
	Factors           []domain.Factor
	RecoveryCodesLeft int
}

// GetUserDetail answers one user of the app, deleted or not, with its sessions, provider links
// and second factors.
func (s *Service) GetUserDetail(ctx context.Context, appID, userID string) (UserDetail, error) {
	u, err := s.ownerUser(ctx, appID, userID)
	if err != nil {
		return UserDetail{}, err
	}
	d := UserDetail{User: u}
	if d.Sessions, err = s.store.ListSessions(ctx, u.AppID, u.ID, s.now(), MaxListedSessions); err != nil {
		return UserDetail{}, err
	}
	if d.Links, err = s.store.ListProviderLinks(ctx, u.AppID, u.ID); err != nil {
		return UserDetail{}, err
	}
	if d.Factors, err = s.store.ListFactors(ctx, u.AppID, u.ID); err != nil {
		return UserDetail{}, err
	}
	for i := range d.Factors {
		d.Factors[i].SealedSecret = nil
	}
	if d.RecoveryCodesLeft, err = s.store.CountRecoveryCodes(ctx, u.AppID, u.ID); err != nil {
		return UserDetail{}, err
	}
	return d, nil
}

// SendPasswordReset mails a user a password reset on the owner's behalf: the hosted "forgot
// password" use case with the user's address, its limits included (the owner's requests count
// under the address like the user's own). Completing it ends on the hosted account page, the
// deployment's own callback, since no app's sign-in is waiting for it. The owner sees the user, so
// a frozen or deleted one is refused outright instead of answered like an unknown address.
func (s *Service) SendPasswordReset(ctx context.Context, appID, userID string) error {
	u, err := s.mailableUser(ctx, appID, userID)
	if err != nil {
		return err
	}
	callback := s.AccountCallbackURI()
	if callback == "" {
		return fault.Unavailable(0, "password reset is not available")
	}
	state, err := domain.NewState()
	if err != nil {
		return err
	}
	_, err = s.StartPasswordReset(ctx, ResetStart{
		Params: LoginParams{ClientID: u.AppID, RedirectURI: callback, State: state},
		Email:  u.Email,
	})
	return err
}

// ResendUserVerification mails a user a fresh verification on the owner's behalf, under the hosted
// resend's limits; its link and code only confirm the address (they continue no sign-in), like the
// account page's own resend. A verified address is refused.
func (s *Service) ResendUserVerification(ctx context.Context, appID, userID string) error {
	u, err := s.mailableUser(ctx, appID, userID)
	if err != nil {
		return err
	}
	if u.EmailVerified {
		return fault.Precondition("the user's address is verified already")
	}
	if err := s.mailReady(); err != nil {
		return err
	}
	a, err := s.store.GetApp(ctx, u.AppID)
	if err != nil {
		return err
	}
	if !a.Enabled {
		return fault.Forbidden("App Is Disabled")
	}
	if _, err := s.reserve(ctx, resendLimits(s.limits).of(s.now(), a.ID, u.Email, "")...); err != nil {
		return err
	}
	_, err = s.sendVerification(ctx, a, u, domain.Continuation{})
	return err
}

// ownerApp is the app an owner's call names (the access policy checked that the caller may act on
// it).
func (s *Service) ownerApp(ctx context.Context, appID string) (domain.App, error) {
	appID = domain.CanonicalID(strings.TrimSpace(appID))
	if !domain.IsUUID(appID) {
		return domain.App{}, fault.InvalidField("appId", "must be a UUID")
	}
	return s.store.GetApp(ctx, appID)
}

// ownerUser is the user of the app an owner's call names, deleted or not.
func (s *Service) ownerUser(ctx context.Context, appID, userID string) (domain.User, error) {
	appID, userID = domain.CanonicalID(strings.TrimSpace(appID)), domain.CanonicalID(strings.TrimSpace(userID))
	if !domain.IsUUID(appID) {
		return domain.User{}, fault.InvalidField("appId", "must be a UUID")
	}
	if !domain.IsUUID(userID) {
		return domain.User{}, fault.InvalidField("userId", "must be a UUID")
	}
	return s.store.GetUser(ctx, appID, userID)
}

// mailableUser is a user an owner may mail: deleted ones are gone (not found, as everywhere),
// frozen ones may not sign in, so a mail leading to a sign-in would be a lie.
func (s *Service) mailableUser(ctx context.Context, appID, userID string) (domain.User, error) {
	u, err := s.ownerUser(ctx, appID, userID)
	if err != nil {
		return domain.User{}, err
	}
	switch {
	case u.Deleted:
		return domain.User{}, domain.NotFound("user")
	case u.Frozen:
		return domain.User{}, fault.Precondition("the user is frozen")
	}
	return u, nil
}
