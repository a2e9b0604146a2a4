package grpc

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Tenant access tokens are admitted by the policy once identity issues them; the handler must
// then confine a token to its own tenant even within the right app.
func TestTenantTokenReachesOnlyItsOwnTenant(t *testing.T) {
	svc := app.New(memory.New(&events.MemoryOutbox{}), nil, app.Options{NewID: uuid.NewString})
	appID := uuid.NewString()
	own, err := svc.CreateTenant(context.Background(), domain.NewTenant{AppID: appID, Name: "Own"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreateTenant(context.Background(), domain.NewTenant{AppID: appID, Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{svc: svc, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
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
			ctx := authn.NewContext(context.Background(), authn.Principal{
				Kind: authn.KindTenantToken, AppID: appID, TenantID: tc.tokenFor, UserID: uuid.NewString(),
			})
			_, err := srv.UpdateTenant(ctx, &tenantv1.UpdateTenantRequest{
				TenantId: tc.target, Patch: &tenantv1.TenantPatch{Description: proto.String("by token")},
			})
			if got := status.Code(err); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

func TestHandlersRefuseCallsWithoutPrincipal(t *testing.T) {
	srv := &Server{svc: app.New(memory.New(&events.MemoryOutbox{}), nil, app.Options{NewID: uuid.NewString})}
	_, err := srv.GetTenant(context.Background(), &tenantv1.GetTenantRequest{TenantId: uuid.NewString()})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("code = %v, want Unauthenticated", status.Code(err))
	}
}
