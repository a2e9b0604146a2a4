package grpcx

import (
	"context"
	"log/slog"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Bad bytes are refused before the policy: a caller without credentials learns that its input is
// bad (400 at the edge), never reaches a credential check, and the handler never runs.
func TestTextRuleRefusesBadStringsBeforeThePolicyNamingTheField(t *testing.T) {
	s, err := NewServer(ServerOptions{Log: slog.New(slog.DiscardHandler), Policy: authn.Policy{Tokens: userTokens{}}})
	if err != nil {
		t.Fatal(err)
	}
	tenantv1.RegisterTenantServiceServer(s, tenantv1.UnimplementedTenantServiceServer{})
	client := tenantv1.NewTenantServiceClient(grpctest.Serve(t, s))
	tests := []struct {
		name  string
		patch *tenantv1.TenantPatch
		code  codes.Code
		field string
	}{
		{"NUL in a name", &tenantv1.TenantPatch{Name: proto.String("ACME\x00")}, codes.InvalidArgument, "patch.name"},
		{"control character in an address", &tenantv1.TenantPatch{BillingAddress: &tenantv1.AddressPatch{City: proto.String("Berlin\x1b")}}, codes.InvalidArgument, "patch.billingAddress.city"},
		{"newline in a single-line field", &tenantv1.TenantPatch{CompanyName: proto.String("A\nB")}, codes.InvalidArgument, "patch.companyName"},
		// The description is declared multi-line: it passes the rule and meets the policy.
		{"lines in the description", &tenantv1.TenantPatch{Description: proto.String("one\r\ntwo\tthree")}, codes.Unauthenticated, ""},
		{"clean text", &tenantv1.TenantPatch{Name: proto.String("ACME")}, codes.Unauthenticated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.UpdateTenant(context.Background(), &tenantv1.UpdateTenantRequest{TenantId: "t1", Patch: tt.patch})
			st := status.Convert(err)
			if st.Code() != tt.code || FieldOf(st) != tt.field {
				t.Fatalf("status = %v %q (field %q), want %v field %q", st.Code(), st.Message(), FieldOf(st), tt.code, tt.field)
			}
		})
	}
}

func TestTextRuleAppliesToEveryStreamMessage(t *testing.T) {
	ctx := metadata.AppendToOutgoingContext(context.Background(), authn.MDAuthorization, "Bearer token-u1")
	_, err := exchange(ctx, streamServer(t), updateUser, "user\x00")
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || FieldOf(st) != "userId" {
		t.Fatalf("status = %v, want InvalidArgument naming userId", st)
	}
}
