package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

const webhookUsage = `
webhook commands (-webhook host:port): the provider calls routes 3 and 4 stored
  webhook-events  [-connection ID] [-outcome received|applied|ignored|rejected|failed] [-provider pspx|pspy]
                  [-since RFC3339] [-until RFC3339] [-limit 1..1000]   (newest first; until exclusive)
  webhook-replay  -id ID | -connection ID -since RFC3339 -until RFC3339
                  (applies the calls again, oldest first; an applied one changes nothing)
`

// isWebhookCommand reports whether cmd is one of webhookUsage's commands.
func isWebhookCommand(cmd string) bool { return cmd == "webhook-events" || cmd == "webhook-replay" }

// runWebhook checks a webhook command's flags, then calls the admin API over conn.
func runWebhook(ctx context.Context, conn grpc.ClientConnInterface, cmd string, args []string) (proto.Message, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var (
		id         = fs.String("id", "", "stored call id")
		connection = fs.String("connection", "", "connection id")
		outcome    = fs.String("outcome", "", "received, applied, ignored, rejected or failed")
		provider   = fs.String("provider", "", "pspx or pspy")
		since      = fs.String("since", "", "received at or after (RFC 3339)")
		until      = fs.String("until", "", "received before (RFC 3339)")
		limit      = fs.Int("limit", 100, "at most this many (1 to 1000)")
	)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	bounds := map[string]time.Time{}
	for name, v := range map[string]string{"since": *since, "until": *until} {
		t, err := time.Parse(time.RFC3339, v)
		if v != "" && err != nil {
			return nil, fmt.Errorf("-%s must be an RFC 3339 time such as 2026-11-01T00:00:00Z", name)
		}
		bounds[name] = t
	}
	if *since != "" && *until != "" && !bounds["until"].After(bounds["since"]) {
		return nil, errors.New("-until must be after -since")
	}
	c := webhookv1.NewWebhookAdminServiceClient(conn)
	if cmd == "webhook-replay" {
		switch {
		case *id != "" && (*connection != "" || *since != "" || *until != ""):
			return nil, errors.New("name either -id or -connection with -since and -until, not both")
		case *id == "" && (*connection == "" || *since == "" || *until == ""):
			return nil, errors.New("name -id, or -connection with -since and -until")
		}
		return c.ReplayEvents(ctx, &webhookv1.ReplayEventsRequest{Id: *id, ConnectionId: *connection, Since: *since, Until: *until})
	}
	switch *outcome {
	case "", "received", "applied", "ignored", "rejected", "failed":
	default:
		return nil, errors.New("-outcome must be received, applied, ignored, rejected or failed")
	}
	if *provider != "" && *provider != "pspx" && *provider != "pspy" {
		return nil, errors.New("-provider must be pspx or pspy")
	}
	if *limit < 1 || *limit > 1000 {
		return nil, errors.New("-limit must be between 1 and 1000")
	}
	return c.ListEvents(ctx, &webhookv1.ListEventsRequest{ConnectionId: *connection, Outcome: *outcome, Provider: *provider,
		Since: *since, Until: *until, Limit: int32(*limit)})
}
