// Command berthctl is the operators' provisioning CLI. It calls the identity, tenant and billing
// admin gRPC APIs with the deployment's admin token (BERTH_ADMIN_TOKEN) and prints each result as JSON. An API
// key's secret is printed once, when it is created; Berth keeps only its hash.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

const usage = `usage: berthctl [-identity host:port] [-tenant host:port] [-billing host:port] [-webhook host:port]
                [-analytics host:port] <command> [flags]

commands:
  project-create  -name NAME
  app-create      -project ID -name NAME [-redirect-uri URI ...]
  app-disable     -app ID
  app-enable      -app ID
  app-rotate-key  -app ID            (logs out every user of the app)
  app-origin-add    -app ID -origin URL   (allow a browser origin scheme://host[:port] for CORS)
  app-origin-remove -app ID -origin URL   (take back an origin added with app-origin-add)
  app-origins       -app ID               (added origins, redirect URI origins, all allowed)
  key-create      -app ID -type read|write -name NAME [-description TEXT]
  role-create     -app ID -name NAME
  tenant-create   -app ID -name NAME [-description TEXT]
  user-create     -app ID -email EMAIL [-tenant ID] [-name NAME] [-given-name G] [-family-name F] [-language L]
  member-add      -project ID -email EMAIL -name NAME   (an operator of the project's apps)
  operator-token  -member ID [-ttl SECONDS]             (default 3600, 0 = 3600, at most 86400)

environment: BERTH_ADMIN_TOKEN (required), BERTH_IDENTITY_GRPC_ADDR, BERTH_TENANT_GRPC_ADDR,
BERTH_BILLING_GRPC_ADDR, BERTH_WEBHOOK_GRPC_ADDR, BERTH_ANALYTICS_GRPC_ADDR; BERTH_GRPC_TLS_CA
(the deployment's CA) to call services that serve TLS
` + billingUsage + webhookUsage + analyticsUsage

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "berthctl:", err)
		os.Exit(1)
	}
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func run(args []string, out io.Writer) error {
	global := flag.NewFlagSet("berthctl", flag.ContinueOnError)
	global.Usage = func() { _, _ = fmt.Fprint(global.Output(), usage) } // stderr: a failed write has nowhere to go
	identityAddr := global.String("identity", config.String("BERTH_IDENTITY_GRPC_ADDR", "127.0.0.1:9101"), "identity gRPC address")
	tenantAddr := global.String("tenant", config.String("BERTH_TENANT_GRPC_ADDR", "127.0.0.1:9102"), "tenant gRPC address")
	billingAddr := global.String("billing", config.String("BERTH_BILLING_GRPC_ADDR", "127.0.0.1:9104"), "billing gRPC address")
	webhookAddr := global.String("webhook", config.String("BERTH_WEBHOOK_GRPC_ADDR", "127.0.0.1:9105"), "webhook-ingest gRPC address")
	analyticsAddr := global.String("analytics", config.String("BERTH_ANALYTICS_GRPC_ADDR", "127.0.0.1:9103"), "analytics gRPC address")
	if err := global.Parse(args); err != nil {
		return err
	}
	if global.NArg() == 0 {
		global.Usage()
		return errors.New("no command")
	}
	token := config.String("BERTH_ADMIN_TOKEN", "")
	if token == "" {
		return errors.New("BERTH_ADMIN_TOKEN is not set")
	}
	cmd, rest := global.Arg(0), global.Args()[1:]
	tlsCfg, err := grpcx.TLSFromEnv(config.OS)
	if err != nil {
		return err
	}
	dial := func(addr string) (*grpc.ClientConn, error) {
		return grpc.NewClient(addr, append(grpcx.ClientOptions("", tlsCfg), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(token)))...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, sub := range []struct {
		is      func(string) bool
		addr    string
		run     func(context.Context, grpc.ClientConnInterface, string, []string) (proto.Message, error)
		all     bool          // print zeros and empty lists
		timeout time.Duration // 0: the 30 seconds of every other command
	}{
		{isBillingCommand, *billingAddr, runBilling, false, 0},
		{isWebhookCommand, *webhookAddr, runWebhook, true, 0},
		// A rebuild replays every stored event: minutes on a large deployment.
		{isAnalyticsCommand, *analyticsAddr, runAnalytics, true, time.Hour},
	} {
		if !sub.is(cmd) {
			continue
		}
		conn, err := dial(sub.addr)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		subCtx := ctx
		if sub.timeout != 0 {
			var cancelSub context.CancelFunc
			subCtx, cancelSub = context.WithTimeout(context.Background(), sub.timeout)
			defer cancelSub()
		}
		res, err := sub.run(subCtx, conn, cmd, rest)
		if err != nil {
			return err
		}
		return writeJSON(out, res, sub.all)
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var (
		name        = fs.String("name", "", "name")
		project     = fs.String("project", "", "project id")
		app         = fs.String("app", "", "app id")
		keyType     = fs.String("type", "", "API key type: read or write")
		description = fs.String("description", "", "description")
		tenantID    = fs.String("tenant", "", "tenant id")
		email       = fs.String("email", "", "email")
		given       = fs.String("given-name", "", "given name")
		family      = fs.String("family-name", "", "family name")
		language    = fs.String("language", "", "language")
		member      = fs.String("member", "", "project member id")
		ttl         = fs.Int("ttl", 3600, "operator token lifetime in seconds")
		origin      = fs.String("origin", "", "browser origin scheme://host[:port]")
		redirects   multi
	)
	fs.Var(&redirects, "redirect-uri", "allowed redirect URI (repeatable)")
	if err := fs.Parse(rest); err != nil {
		return err
	}

	var res proto.Message
	switch cmd {
	case "tenant-create":
		conn, derr := dial(*tenantAddr)
		if derr != nil {
			return derr
		}
		defer func() { _ = conn.Close() }()
		res, err = tenantv1.NewTenantAdminServiceClient(conn).CreateTenant(ctx, &tenantv1.CreateTenantRequest{AppId: *app, Name: *name, Description: *description})
	default:
		conn, derr := dial(*identityAddr)
		if derr != nil {
			return derr
		}
		defer func() { _ = conn.Close() }()
		c := identityv1.NewIdentityAdminServiceClient(conn)
		switch cmd {
		case "project-create":
			res, err = c.CreateProject(ctx, &identityv1.CreateProjectRequest{Name: *name})
		case "app-create":
			res, err = c.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: *project, Name: *name, RedirectUris: redirects})
		case "app-disable", "app-enable":
			res, err = c.SetAppEnabled(ctx, &identityv1.SetAppEnabledRequest{AppId: *app, Enabled: cmd == "app-enable"})
		case "app-rotate-key":
			res, err = c.RotateAppKey(ctx, &identityv1.RotateAppKeyRequest{AppId: *app})
		case "app-origin-add":
			res, err = c.AddAppOrigin(ctx, &identityv1.AppOriginRequest{AppId: *app, Origin: *origin})
		case "app-origin-remove":
			res, err = c.RemoveAppOrigin(ctx, &identityv1.AppOriginRequest{AppId: *app, Origin: *origin})
		case "app-origins":
			res, err = c.ListAppOrigins(ctx, &identityv1.ListAppOriginsRequest{AppId: *app})
		case "key-create":
			res, err = c.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: *app, Type: *keyType, Name: *name, Description: *description})
		case "role-create":
			res, err = c.CreateUserRole(ctx, &identityv1.CreateUserRoleRequest{AppId: *app, Name: *name})
		case "user-create":
			res, err = c.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: *app, TenantId: *tenantID, Email: *email, Name: *name, GivenName: *given, FamilyName: *family, Language: *language})
		case "member-add":
			res, err = c.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: *project, Email: *email, Name: *name})
		case "operator-token":
			// The service enforces the lifetime limits (0 = one hour); this only keeps the value
			// inside int32.
			if *ttl < 0 || *ttl > math.MaxInt32 {
				return fmt.Errorf("-ttl must be a number of seconds between 0 and 86400")
			}
			res, err = c.IssueOperatorToken(ctx, &identityv1.IssueOperatorTokenRequest{MemberId: *member, TtlSeconds: int32(*ttl)})
		default:
			global.Usage()
			return fmt.Errorf("unknown command %q", cmd)
		}
	}
	if err != nil {
		return err
	}
	return printJSON(out, res)
}

// printJSON writes a result as JSON in the proto field names.
func printJSON(out io.Writer, res proto.Message) error { return writeJSON(out, res, false) }

// writeJSON writes a result as JSON in the proto field names; all prints zeros and empty lists
// too, where an operator reads "none" from them (a replay's failed count, an empty list).
func writeJSON(out io.Writer, res proto.Message, all bool) error {
	b, err := protojson.MarshalOptions{Multiline: true, UseProtoNames: true, EmitUnpopulated: all}.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, string(b))
	return err
}
