package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/server"
)

// TestOperatorTokenWiring proves route 2 end to end: the server's policy verifies operator tokens,
// the update's event reaches JetStream, and (PostgreSQL) a second replica on the same database
// accepts a token the first one issued, since the operator key is stored once per deployment.
func TestOperatorTokenWiring(t *testing.T) {
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			bus, _ := natstest.New(t)
			cfg := baseConfig(bus)
			if store == "postgres" {
				cfg.DatabaseURL = pgtest.URL(t, "identity-server", func(context.Context, *pgxpool.Pool) error { return nil })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := server.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runDone := make(chan error, 1)
			runCtx, stopRun := context.WithCancel(ctx)
			go func() { runDone <- s.Run(runCtx) }()
			defer func() {
				stopRun()
				if err := <-runDone; err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Run: %v", err)
				}
			}()

			conn := dial(t, s)
			admin := identityv1.NewIdentityAdminServiceClient(conn)
			actx := withAdmin(ctx)
			p, err := admin.CreateProject(actx, &identityv1.CreateProjectRequest{Name: "p"})
			if err != nil {
				t.Fatal(err)
			}
			a, err := admin.CreateApp(actx, &identityv1.CreateAppRequest{ProjectId: p.GetId(), Name: "a"})
			if err != nil {
				t.Fatal(err)
			}
			key, err := admin.CreateApiKey(actx, &identityv1.CreateApiKeyRequest{AppId: a.GetId(), Type: "read", Name: "k"})
			if err != nil {
				t.Fatal(err)
			}
			m, err := admin.AddProjectMember(actx, &identityv1.AddProjectMemberRequest{ProjectId: p.GetId(), Email: "op@example.test", Name: "Op"})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := admin.IssueOperatorToken(actx, &identityv1.IssueOperatorTokenRequest{MemberId: m.GetId(), TtlSeconds: 600})
			if err != nil {
				t.Fatal(err)
			}
			octx := metadata.AppendToOutgoingContext(ctx, authn.MDAuthorization, "Bearer "+tok.GetToken())
			req := &identityv1.UpdateApiKeyRequest{ProjectUuid: p.GetId(), AppUuid: a.GetId(), ApiKeyUuid: key.GetKey().GetUuid(), Name: proto.String("renamed")}
			list, err := identityv1.NewOperatorServiceClient(conn).UpdateApiKey(octx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.GetItems()) != 1 || list.GetItems()[0].GetName() != "renamed" {
				t.Errorf("list = %v", list)
			}
			ev := waitForEvent(t, ctx, bus, identityv1.EventAPIKeyChanged)
			var payload identityv1.ApiKeyChanged
			if err := ev.Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if payload.GetKeyId() != key.GetKey().GetUuid() || payload.GetAppId() != a.GetId() {
				t.Errorf("event payload %v", &payload)
			}

			if store != "postgres" {
				return
			}
			replica, err := server.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer replica.Close()
			if _, err := identityv1.NewOperatorServiceClient(dial(t, replica)).UpdateApiKey(octx, req); err != nil {
				t.Errorf("second replica refused the operator token: %v", err)
			}
		})
	}
}
