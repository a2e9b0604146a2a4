package tenant

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
)

// Client implements app.Tenants over gRPC.
type Client struct {
	c tenantv1.TenantInternalServiceClient
}

var _ app.Tenants = Client{}

// New returns a client on conn, whose calls must carry the service token (grpcx.Dial does).
func New(conn grpc.ClientConnInterface) Client {
	return Client{c: tenantv1.NewTenantInternalServiceClient(conn)}
}

// CreateTenant implements app.Tenants.
func (t Client) CreateTenant(ctx context.Context, appID, name string) (string, error) {
	res, err := t.c.CreateTenantForSignUp(ctx, &tenantv1.CreateTenantForSignUpRequest{AppId: appID, Name: name})
	if err != nil {
		return "", err
	}
	if res.GetId() == "" {
		return "", errors.New("tenant service returned a tenant without an id")
	}
	return res.GetId(), nil
}
