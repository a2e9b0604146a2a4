package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// runWebhook runs the webhook service's commands.
func runWebhook(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	fs := inv.fs
	var (
		id         = fs.String("id", "", "stored call id")
		connection = fs.String("connection", "", "connection id")
		outcome    = fs.String("outcome", "", "received, applied, ignored, rejected or failed")
		provider   = fs.String("provider", "", "pspx or pspy")
		since      = fs.String("since", "", "received at or after (RFC 3339)")
		until      = fs.String("until", "", "received before (RFC 3339)")
		limit      = fs.Int("limit", 100, "at most this many (1 to 1000)")
	)
	if err := inv.parse(); err != nil {
		return nil, err
	}
	bounds := map[string]time.Time{}
	for name, v := range map[string]string{"since": *since, "until": *until} {
		t, err := time.Parse(time.RFC3339, v)
		if v != "" && err != nil {
			return nil, usageError{fmt.Errorf("-%s must be an RFC 3339 time such as 2026-11-01T00:00:00Z", name)}
		}
		bounds[name] = t
	}
	if *since != "" && *until != "" && !bounds["until"].After(bounds["since"]) {
		return nil, usageError{errors.New("-until must be after -since")}
	}
	c := webhookv1.NewWebhookAdminServiceClient(conn)
	if inv.cmd.name == "webhook-replay" {
		switch {
		case *id != "" && (*connection != "" || *since != "" || *until != ""):
			return nil, usageError{errors.New("name either -id or -connection with -since and -until, not both")}
		case *id == "" && (*connection == "" || *since == "" || *until == ""):
			return nil, usageError{errors.New("name -id, or -connection with -since and -until")}
		}
		return c.ReplayEvents(ctx, &webhookv1.ReplayEventsRequest{Id: *id, ConnectionId: *connection, Since: *since, Until: *until})
	}
	if *limit < 1 || *limit > 1000 {
		return nil, usageError{errors.New("-limit must be between 1 and 1000")}
	}
	return c.ListEvents(ctx, &webhookv1.ListEventsRequest{ConnectionId: *connection, Outcome: *outcome, Provider: *provider,
		Since: *since, Until: *until, Limit: int32(*limit)})
}
