package grpcapi

import (
	"context"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
)

// OperatorServer implements the platform operators' internal API (route 2).
type OperatorServer struct {
	identityv1.UnimplementedOperatorServiceServer
	svc *app.Service
}

// UpdateApiKey is route 2.
func (s *OperatorServer) UpdateApiKey(ctx context.Context, req *identityv1.UpdateApiKeyRequest) (*identityv1.ApiKeyList, error) {
	p, ok := authn.FromContext(ctx)
	if !ok || p.Kind != authn.KindOperator || p.UserID == "" {
		// The policy admits only operator tokens here; anything else is a wiring fault.
		return nil, fault.Unauthenticated("Unauthorized Token")
	}
	k, err := s.svc.UpdateAPIKey(ctx, p.UserID, app.APIKeyUpdate{
		ProjectID: req.GetProjectUuid(), AppID: req.GetAppUuid(), KeyID: req.GetApiKeyUuid(),
		Name: req.Name, Description: req.Description,
	})
	if err != nil {
		return nil, err
	}
	return convert.APIKeyList(k), nil
}
