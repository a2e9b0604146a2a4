package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/convert"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// Series implements analyticsv1.AnalyticsSeriesServiceServer. The access policy admits the admin
// token, and a member's operator token of the project owning the request's app (the route option),
// so the handler takes the app from the request.
type Series struct {
	analyticsv1.UnimplementedAnalyticsSeriesServiceServer
	svc *app.Service
}

// RegisterSeries serves AnalyticsSeriesService of svc on s.
func RegisterSeries(s grpc.ServiceRegistrar, svc *app.Service) {
	analyticsv1.RegisterAnalyticsSeriesServiceServer(s, &Series{svc: svc})
}

// GetDailySeries answers the app's rows per UTC day.
func (s *Series) GetDailySeries(ctx context.Context, req *analyticsv1.GetDailySeriesRequest) (*analyticsv1.DailySeries, error) {
	series, err := s.svc.DailySeries(ctx, req.GetAppId(), int(req.GetDays()), req.GetEnd())
	if err != nil {
		return nil, err
	}
	return convert.DailySeries(series), nil
}
