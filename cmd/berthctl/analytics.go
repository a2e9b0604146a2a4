package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// runAnalytics calls the analytics admin API over conn.
func runAnalytics(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	if err := inv.parse(); err != nil {
		return nil, err
	}
	return analyticsv1.NewAnalyticsAdminServiceClient(conn).RebuildReadModels(ctx, &analyticsv1.RebuildReadModelsRequest{})
}
