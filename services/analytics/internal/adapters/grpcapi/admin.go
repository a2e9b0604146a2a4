package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/services/analytics/internal/app"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// Admin implements analyticsv1.AnalyticsAdminServiceServer; the access policy admits the admin
// token to it, and a project member's operator token to an app's audit retention (the route option
// of each method).
type Admin struct {
	analyticsv1.UnimplementedAnalyticsAdminServiceServer
	svc *app.Service
}

// RegisterAdmin serves AnalyticsAdminService of svc on s.
func RegisterAdmin(s grpc.ServiceRegistrar, svc *app.Service) {
	analyticsv1.RegisterAnalyticsAdminServiceServer(s, &Admin{svc: svc})
}

// RebuildReadModels empties the read models and replays the events into them.
func (a *Admin) RebuildReadModels(ctx context.Context, _ *analyticsv1.RebuildReadModelsRequest) (*analyticsv1.RebuildReadModelsResult, error) {
	stats, err := a.svc.Rebuild(ctx)
	if err != nil {
		return nil, err
	}
	return &analyticsv1.RebuildReadModelsResult{Applied: int32(stats.Applied), Malformed: int32(stats.Malformed)}, nil
}

// AuditRetention answers how many days the app's audit entries are kept.
func (a *Admin) AuditRetention(ctx context.Context, req *analyticsv1.AuditRetentionRequest) (*analyticsv1.AuditRetentionSetting, error) {
	days, err := a.svc.AuditRetention(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return &analyticsv1.AuditRetentionSetting{AppId: req.GetAppId(), RetentionDays: int32(days)}, nil
}

// SetAuditRetention sets how many days the app's audit entries are kept.
func (a *Admin) SetAuditRetention(ctx context.Context, req *analyticsv1.SetAuditRetentionRequest) (*analyticsv1.AuditRetentionSetting, error) {
	if err := a.svc.SetAuditRetention(ctx, req.GetAppId(), int(req.GetRetentionDays())); err != nil {
		return nil, err
	}
	return &analyticsv1.AuditRetentionSetting{AppId: req.GetAppId(), RetentionDays: req.GetRetentionDays()}, nil
}
