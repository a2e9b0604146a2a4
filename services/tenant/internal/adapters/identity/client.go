package identity

import (
	"context"
	"fmt"
	"github.com/berthhq/berth/pkg/fault"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/services/tenant/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Directory implements app.UserDirectory.
type Directory struct {
	client identityv1.IdentityInternalServiceClient
}

// NewDirectory returns a directory over an identity client.
func NewDirectory(c identityv1.IdentityInternalServiceClient) *Directory {
	return &Directory{client: c}
}

// TenantUsers asks identity for the tenant's users. Transient failures (identity down, deadline
// passed) wrap app.ErrUsersUnavailable; anything else identity answers is a fault of the call.
func (d *Directory) TenantUsers(ctx context.Context, appID, tenantID string) ([]*identityv1.TenantUser, error) {
	resp, err := d.client.ListTenantUsers(ctx, &identityv1.ListTenantUsersRequest{AppId: appID, TenantId: tenantID})
	if err != nil {
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
			return nil, fmt.Errorf("%w: %v", app.ErrUsersUnavailable, err)
		}
		// Identity's own answer (a wrong service token, say) is a deployment fault here, never
		// something to pass on to this service's caller.
		return nil, fault.Internal(fmt.Errorf("list tenant users: %w", err))
	}
	return resp.GetUsers(), nil
}
