package main

import (
	"context"
	"flag"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

const analyticsUsage = `
analytics commands (-analytics host:port):
  analytics-rebuild   empty the read models of routes 6 to 9 and replay every stored event into
                      them (prints the events applied and skipped as malformed); lists answered
                      meanwhile are incomplete
`

// isAnalyticsCommand reports whether cmd is one of analyticsUsage's commands.
func isAnalyticsCommand(cmd string) bool { return cmd == "analytics-rebuild" }

// runAnalytics calls the analytics admin API over conn.
func runAnalytics(ctx context.Context, conn grpc.ClientConnInterface, cmd string, args []string) (proto.Message, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return analyticsv1.NewAnalyticsAdminServiceClient(conn).RebuildReadModels(ctx, &analyticsv1.RebuildReadModelsRequest{})
}
