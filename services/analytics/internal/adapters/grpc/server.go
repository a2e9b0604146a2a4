package grpc

import (
	"context"
	"errors"

	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/apierr"
	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/convert"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// Server implements analyticsv1.AnalyticsServiceServer.
type Server struct {
	analyticsv1.UnimplementedAnalyticsServiceServer
	svc *app.Service
}

// Register serves AnalyticsService of svc on s.
func Register(s gogrpc.ServiceRegistrar, svc *app.Service) {
	analyticsv1.RegisterAnalyticsServiceServer(s, &Server{svc: svc})
}

// ListSignIns is route 8.
func (s *Server) ListSignIns(ctx context.Context, req *analyticsv1.ListSignInsRequest) (*analyticsv1.SignInList, error) {
	p, ok := authn.FromContext(ctx)
	if !ok || p.AppID == "" {
		return nil, apierr.Unauthenticated("Unauthorized")
	}
	items, err := s.svc.ListSignIns(ctx, p.AppID, req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, toStatus(err)
	}
	return convert.SignInList(items), nil
}

// toStatus maps use-case errors to the statuses the edge renders; messages carry no internals.
func toStatus(err error) error {
	var fe *domain.FieldError
	switch {
	case errors.As(err, &fe):
		return apierr.Invalid(fe.Field, "%s %s", fe.Field, fe.Reason)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return apierr.Internal(err)
}
