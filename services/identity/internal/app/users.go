package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// GetUser is route 14: ref is the user's UUID or email (case-insensitive), within the caller's app.
// Soft-deleted users are returned too (with Deleted set).
func (s *Service) GetUser(ctx context.Context, callerApp, ref string) (domain.User, error) {
	ref = domain.CanonicalID(ref)
	switch {
	case domain.IsUUID(ref):
		return s.store.GetUser(ctx, callerApp, ref)
	case domain.IsEmail(ref):
		return s.store.GetUserByEmail(ctx, callerApp, ref)
	}
	return domain.User{}, fault.InvalidField("userId", "must be a user id (UUID) or an email address")
}

// Access statuses of route 16.
const (
	accessFrozen   = "0"
	accessUnfrozen = "1"
)

// SetAccessStatus is route 16: "0" freezes, "1" unfreezes. Setting the state a user already has
// succeeds without an event.
//
// Freezing revokes the user's sessions (refresh-token families), with identity.sessions.revoked
// (reason "frozen") when any was live. That happens after the freeze is stored, and again on every
// repeated freeze, so a failed revocation is completed by retrying the call; meanwhile every
// refresh and every token verification re-checks the user and refuses a frozen one.
func (s *Service) SetAccessStatus(ctx context.Context, callerApp, appID, userID, status string) error {
	appID, userID = domain.CanonicalID(appID), domain.CanonicalID(userID)
	var freeze bool
	switch status {
	case accessFrozen:
		freeze = true
	case accessUnfrozen:
	default:
		return fault.InvalidField("accessStatus", "must be 0 (freeze) or 1 (unfreeze)")
	}
	if !domain.IsUUID(userID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	if err := ownApp(callerApp, appID); err != nil {
		return err
	}
	_, err := s.store.UpdateUser(ctx, appID, userID, func(u *domain.User) ([]events.Event, error) {
		changed, err := u.SetFrozen(freeze, s.now())
		if err != nil || !changed {
			return nil, err
		}
		eventType := identityv1.EventUserUnfrozen
		if freeze {
			eventType = identityv1.EventUserFrozen
		}
		return event(eventType, u.AppID, convert.UserChanged(*u, nil))
	})
	if err != nil || !freeze {
		return err
	}
	return s.revokeSessions(ctx, appID, userID, "", domain.RevokedFrozen)
}

// GetMe is the user of a tenant access token (GET /v1/users/me).
func (s *Service) GetMe(ctx context.Context, callerApp, userID string) (domain.User, error) {
	u, err := s.store.GetUser(ctx, callerApp, domain.CanonicalID(userID))
	if err != nil {
		return domain.User{}, err
	}
	if u.Deleted {
		return domain.User{}, domain.NotFound("user")
	}
	return u, nil
}

// DeleteUser soft-deletes a user of the caller's app (DELETE /v1/users/{userId}), revokes the
// user's sessions (with identity.sessions.revoked, reason "deleted", when any was live) and emits identity.user.deleted with the number of users the tenant keeps,
// from which the tenant service decides whether the tenant goes too. Deleting twice is not found.
func (s *Service) DeleteUser(ctx context.Context, callerApp, userID string) error {
	userID = domain.CanonicalID(userID)
	if !domain.IsUUID(userID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	_, err := s.store.DeleteUser(ctx, callerApp, userID, s.now(), func(u domain.User, left int) ([]events.Event, error) {
		return event(identityv1.EventUserDeleted, u.AppID, &identityv1.UserDeleted{
			AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, TenantUsersLeft: int32(left),
		})
	})
	if err != nil {
		return err
	}
	return s.revokeSessions(ctx, callerApp, userID, "", domain.RevokedDeleted)
}

// UpdateUser is route 18: only the patch's set fields change. A patch that changes nothing
// succeeds without an event. Invalid patch fields are reported as "user.<field>".
func (s *Service) UpdateUser(ctx context.Context, callerApp, userID string, patch domain.UserPatch) error {
	userID = domain.CanonicalID(userID)
	if !domain.IsUUID(userID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	attempt, err := s.reserveEmailChange(ctx, callerApp, userID, patch)
	if err != nil {
		return err
	}
	_, err = s.store.UpdateUser(ctx, callerApp, userID, func(u *domain.User) ([]events.Event, error) {
		previous, now := u.Email, s.now()
		changed, err := u.ApplyPatch(patch, now)
		if err != nil {
			return nil, err
		}
		return userChangeEvents(*u, previous, changed, now)
	})
	if err != nil && !errors.Is(err, domain.ErrEmailTaken) {
		// Only a change that was tried counts: a refused address (the probe the limit is for) or a
		// stored one. A request refused for anything else changed no email.
		s.release(ctx, attempt)
	}
	return inPatch(err)
}

// reserveEmailChange counts a patch that changes the user's email against the user's daily
// allowance (LoginLimits.EmailChanges). A refused change tells the caller that the address belongs
// to another user, so without a bound a user's own token could test which addresses are
// registered. Patches that leave the email as it is (or name an invalid one, which the update
// refuses) are not counted; it returns "" for them.
func (s *Service) reserveEmailChange(ctx context.Context, appID, userID string, patch domain.UserPatch) (string, error) {
	if patch.Email == nil || !domain.IsEmail(*patch.Email) {
		return "", nil
	}
	u, err := s.store.GetUser(ctx, appID, userID)
	if err != nil {
		return "", err
	}
	if strings.EqualFold(strings.TrimSpace(*patch.Email), u.Email) {
		return "", nil
	}
	l := s.limits
	return s.reserve(ctx, newLimit("email-change:"+appID+":"+userID, l.EmailChanges, l.EmailChangeWindow, s.now(),
		func(window time.Duration) error {
			return fault.Exhausted(window, "user.email can be changed at most %d times in %d hours; try again later",
				l.EmailChanges, int(window.Hours()))
		}))
}

// inPatch names an invalid patch field by its path in the route-18 body ("user.email"), which is
// where the caller has to look.
func inPatch(err error) error {
	if f, ok := fault.As(err); ok && f.Kind() == fault.KindInvalid {
		return fault.Invalid("user."+f.Field(), "user.%s", f.Message())
	}
	return err
}

// ListUserRoles is route 11: the roles of the caller's own app, sorted by name.
func (s *Service) ListUserRoles(ctx context.Context, callerApp, appID string) ([]domain.UserRole, error) {
	appID = domain.CanonicalID(appID)
	if err := ownApp(callerApp, appID); err != nil {
		return nil, err
	}
	return s.store.ListRoles(ctx, appID)
}

// PublicKey is route 15: the caller's app's current signing key as SPKI PEM.
func (s *Service) PublicKey(ctx context.Context, callerApp, appID string) (string, error) {
	appID = domain.CanonicalID(appID)
	if err := ownApp(callerApp, appID); err != nil {
		return "", err
	}
	a, err := s.store.GetApp(ctx, appID)
	if err != nil {
		return "", err
	}
	return a.PublicKeyPEM, nil
}

// GetUserRef serves other contexts acting for a user a route names (billing finds the user's
// tenant): the live user of that app. A deleted user is not found: nothing may be bought for it.
func (s *Service) GetUserRef(ctx context.Context, appID, userID string) (domain.User, error) {
	appID, userID = domain.CanonicalID(appID), domain.CanonicalID(userID)
	if !domain.IsUUID(appID) {
		return domain.User{}, fault.InvalidField("appId", "must be a UUID")
	}
	if !domain.IsUUID(userID) {
		return domain.User{}, fault.InvalidField("userId", "must be a UUID")
	}
	u, err := s.store.GetUser(ctx, appID, userID)
	if err != nil {
		return domain.User{}, err
	}
	if u.Deleted {
		return domain.User{}, domain.NotFound("user")
	}
	return u, nil
}

// GetAppRef serves other contexts that need an enabled app's name and first redirect URI
// (billing's default payment return URL). A disabled app is not found: nothing may be bought
// through it.
func (s *Service) GetAppRef(ctx context.Context, appID string) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	if !domain.IsUUID(appID) {
		return domain.App{}, fault.InvalidField("appId", "must be a UUID")
	}
	a, err := s.store.GetApp(ctx, appID)
	if err != nil {
		return domain.App{}, err
	}
	if !a.Enabled {
		return domain.App{}, domain.NotFound("app")
	}
	return a, nil
}

// GetTenantReferrer serves billing's referral reward: the live user whose invite (route 23) the
// tenant's earliest referred live user signed up with. Users join a tenant at sign-up, so that is
// normally the user who created the tenant. Not found when no user of the tenant was referred, or
// the inviter is deleted since.
func (s *Service) GetTenantReferrer(ctx context.Context, appID, tenantID string) (domain.User, error) {
	users, err := s.ListTenantUsers(ctx, appID, tenantID)
	if err != nil {
		return domain.User{}, err
	}
	for _, u := range users {
		if u.ReferredBy != "" {
			return s.GetUserRef(ctx, u.AppID, u.ReferredBy)
		}
	}
	return domain.User{}, domain.NotFound("referrer")
}

// ListTenantUsers serves the tenant service: the tenant's users that are not deleted, oldest first.
func (s *Service) ListTenantUsers(ctx context.Context, appID, tenantID string) ([]domain.User, error) {
	appID, tenantID = domain.CanonicalID(appID), domain.CanonicalID(tenantID)
	if !domain.IsUUID(appID) {
		return nil, fault.InvalidField("appId", "must be a UUID")
	}
	if !domain.IsUUID(tenantID) {
		return nil, fault.InvalidField("tenantId", "must be a UUID")
	}
	return s.store.ListTenantUsers(ctx, appID, tenantID)
}
