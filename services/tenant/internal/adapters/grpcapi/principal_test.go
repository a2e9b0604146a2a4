package grpcapi

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// tokensOf admits "Bearer <tenant id>" as a token of that tenant's user in app.
type tokensOf struct{ app string }

func (v tokensOf) VerifyAccessToken(_ context.Context, raw string) (authn.Principal, error) {
	return authn.Principal{AppID: v.app, TenantID: raw, UserID: uuid.NewString()}, nil
}

// Tenant access tokens are admitted by the policy once identity issues them; route 17 then confines
// a token to its own tenant even within the right app (its option names tenantId as the token's
// scope, which the policy enforces before the handler runs).
func TestTenantTokenReachesOnlyItsOwnTenant(t *testing.T) {
	svc := memoryService(t)
	appID := uuid.NewString()
	own, err := svc.CreateTenant(context.Background(), domain.NewTenant{AppID: appID, Name: "Own"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreateTenant(context.Background(), domain.NewTenant{AppID: appID, Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{svc: svc}
	policy := authn.Policy{Tokens: tokensOf{app: appID}}.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: tenantv1.TenantService_UpdateTenant_FullMethodName}
	cases := []struct {
		name     string
		tokenFor string
		target   string
		want     codes.Code
	}{
		{"own tenant", own.ID, own.ID, codes.OK},
		{"own tenant spelled in upper case", own.ID, strings.ToUpper(own.ID), codes.OK},
		{"another tenant of the same app", own.ID, other.ID, codes.PermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(authn.MDAuthorization, "Bearer "+tc.tokenFor))
			req := &tenantv1.UpdateTenantRequest{
				TenantId: tc.target, Patch: &tenantv1.TenantPatch{Description: proto.String("by token")},
			}
			_, err := policy(ctx, req, info, func(ctx context.Context, req any) (any, error) {
				return srv.UpdateTenant(ctx, req.(*tenantv1.UpdateTenantRequest))
			})
			if got := grpcx.StatusOf(err).Code(); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

func TestHandlersRefuseCallsWithoutPrincipal(t *testing.T) {
	srv := &Server{svc: memoryService(t)}
	_, err := srv.GetTenant(context.Background(), &tenantv1.GetTenantRequest{TenantId: uuid.NewString()})
	if got := grpcx.StatusOf(err).Code(); got != codes.Unauthenticated {
		t.Fatalf("code = %v, want Unauthenticated", got)
	}
}

// memoryService is the use cases on a memory store, without a user directory.
func memoryService(t *testing.T) *app.Service {
	t.Helper()
	svc, err := app.New(app.Config{Store: memory.New(&events.MemoryOutbox{}), NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
