package identity

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Users implements app.Users over identity's internal API.
type Users struct {
	client identityv1.IdentityInternalServiceClient
}

// NewUsers returns the adapter over an identity client (its calls must carry the service token).
func NewUsers(c identityv1.IdentityInternalServiceClient) *Users { return &Users{client: c} }

// errUnavailable answers a route when identity cannot be reached.
var errUnavailable = fault.Unavailable(0, "Service temporarily unavailable")

// errUserNotFound answers a user that is absent, another app's or deleted alike.
var errUserNotFound = fault.NotFound("User not found")

// User asks identity for the app's live user.
func (u *Users) User(ctx context.Context, appID, userID string) (app.UserRef, error) {
	ref, err := u.client.GetUserRef(ctx, &identityv1.GetUserRefRequest{AppId: appID, UserId: userID})
	if err != nil {
		switch status.Code(err) {
		case codes.NotFound, codes.InvalidArgument:
			return app.UserRef{}, errUserNotFound
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
			return app.UserRef{}, errUnavailable.Wrap(err)
		}
		return app.UserRef{}, fault.Internal(fmt.Errorf("get user ref: %w", err))
	}
	return app.UserRef{ID: ref.GetUserId(), TenantID: ref.GetTenantRef(), Email: ref.GetEmail()}, nil
}
