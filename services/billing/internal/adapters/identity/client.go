package identity

import (
	"context"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/billing/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Users implements app.Users over identity's internal API.
type Users struct {
	client identityv1.IdentityInternalServiceClient
}

// NewUsers returns the adapter over an identity client (its calls must carry the service token).
func NewUsers(c identityv1.IdentityInternalServiceClient) *Users { return &Users{client: c} }

// Absent, another app's or deleted look alike to the caller.
var (
	errUserNotFound = fault.NotFound("User not found")
	errAppNotFound  = fault.NotFound("App not found")
	errNoReferrer   = fault.NotFound("No referrer")
)

// User asks identity for the app's live user.
func (u *Users) User(ctx context.Context, appID, userID string) (app.UserRef, error) {
	ref, err := u.client.GetUserRef(ctx, &identityv1.GetUserRefRequest{AppId: appID, UserId: userID})
	if err != nil {
		return app.UserRef{}, grpcx.Downstream(err, "get user ref", errUserNotFound)
	}
	return userRef(ref), nil
}

// TenantReferrer asks identity who referred the tenant.
func (u *Users) TenantReferrer(ctx context.Context, appID, tenantID string) (app.UserRef, error) {
	ref, err := u.client.GetTenantReferrer(ctx, &identityv1.GetTenantReferrerRequest{AppId: appID, TenantId: tenantID})
	if err != nil {
		return app.UserRef{}, grpcx.Downstream(err, "get tenant referrer", errNoReferrer)
	}
	return userRef(ref), nil
}

func userRef(ref *identityv1.UserRef) app.UserRef {
	return app.UserRef{ID: ref.GetUserId(), TenantID: ref.GetTenantRef(), Email: ref.GetEmail()}
}

// App asks identity for an enabled app.
func (u *Users) App(ctx context.Context, appID string) (app.AppRef, error) {
	ref, err := u.client.GetAppRef(ctx, &identityv1.GetAppRefRequest{AppId: appID})
	if err != nil {
		return app.AppRef{}, grpcx.Downstream(err, "get app ref", errAppNotFound)
	}
	return app.AppRef{ID: ref.GetAppId(), Name: ref.GetName(), FirstRedirectURI: ref.GetFirstRedirectUri()}, nil
}
