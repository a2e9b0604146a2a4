package app

import (
	"context"
	"errors"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/wire"
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
	return domain.User{}, domain.Invalid("userId", "must be a user id (UUID) or an email address")
}

// Access statuses of route 16.
const (
	accessFrozen   = "0"
	accessUnfrozen = "1"
)

// SetAccessStatus is route 16: "0" freezes, "1" unfreezes. Setting the state a user already has
// succeeds without an event.
//
// This is the one place a user gets frozen: revoking the user's refresh tokens on freeze belongs
// here, inside the same update, once tokens are issued.
func (s *Service) SetAccessStatus(ctx context.Context, callerApp, appID, userID, status string) error {
	appID, userID = domain.CanonicalID(appID), domain.CanonicalID(userID)
	var freeze bool
	switch status {
	case accessFrozen:
		freeze = true
	case accessUnfrozen:
	default:
		return domain.Invalid("accessStatus", "must be 0 (freeze) or 1 (unfreeze)")
	}
	if !domain.IsUUID(userID) {
		return domain.Invalid("userId", "must be a UUID")
	}
	if err := ownApp(callerApp, appID); err != nil {
		return err
	}
	_, err := s.store.UpdateUser(ctx, appID, userID, func(u *domain.User) ([]events.Event, error) {
		changed, err := u.SetFrozen(freeze, s.now())
		if err != nil || !changed {
			return nil, err
		}
		eventType := EventUserUnfrozen
		if freeze {
			eventType = EventUserFrozen
		}
		return event(eventType, u.AppID, wire.UserChanged(*u, nil))
	})
	return err
}

// UpdateUser is route 18: only the patch's set fields change. A patch that changes nothing
// succeeds without an event. Invalid patch fields are reported as "user.<field>".
func (s *Service) UpdateUser(ctx context.Context, callerApp, userID string, patch domain.UserPatch) error {
	userID = domain.CanonicalID(userID)
	if !domain.IsUUID(userID) {
		return domain.Invalid("userId", "must be a UUID")
	}
	_, err := s.store.UpdateUser(ctx, callerApp, userID, func(u *domain.User) ([]events.Event, error) {
		changed, err := u.ApplyPatch(patch, s.now())
		if err != nil || len(changed) == 0 {
			return nil, err
		}
		return event(EventUserUpdated, u.AppID, wire.UserChanged(*u, changed))
	})
	return inPatch(emailTaken(err))
}

// inPatch names an invalid patch field by its path in the route-18 body ("user.email"), which is
// where the caller has to look.
func inPatch(err error) error {
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		return &domain.ValidationError{Field: "user." + ve.Field, Reason: ve.Reason}
	}
	return err
}

// emailTaken turns the store's uniqueness conflict into a validation error on the email field.
func emailTaken(err error) error {
	if errors.Is(err, domain.ErrEmailTaken) {
		return domain.Invalid("email", "is already used by another user of this app")
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

// ListTenantUsers serves the tenant service: the tenant's users that are not deleted, oldest first.
func (s *Service) ListTenantUsers(ctx context.Context, appID, tenantID string) ([]domain.User, error) {
	appID, tenantID = domain.CanonicalID(appID), domain.CanonicalID(tenantID)
	if !domain.IsUUID(appID) {
		return nil, domain.Invalid("appId", "must be a UUID")
	}
	if !domain.IsUUID(tenantID) {
		return nil, domain.Invalid("tenantId", "must be a UUID")
	}
	return s.store.ListTenantUsers(ctx, appID, tenantID)
}
