package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/convert"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// Server implements analyticsv1.AnalyticsServiceServer.
type Server struct {
	analyticsv1.UnimplementedAnalyticsServiceServer
	svc *app.Service
}

// Register serves AnalyticsService of svc on s.
func Register(s grpc.ServiceRegistrar, svc *app.Service) {
	analyticsv1.RegisterAnalyticsServiceServer(s, &Server{svc: svc})
}

// ListSignIns is route 8.
func (s *Server) ListSignIns(ctx context.Context, req *analyticsv1.ListSignInsRequest) (*analyticsv1.SignInList, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	items, err := s.svc.ListSignIns(ctx, appID, req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, err
	}
	return convert.SignInList(items), nil
}
