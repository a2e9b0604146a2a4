package identity

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/services/tenant/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// answering is an identity client whose ListTenantUsers fails with err.
type answering struct {
	identityv1.IdentityInternalServiceClient
	err error
}

func (a answering) ListTenantUsers(context.Context, *identityv1.ListTenantUsersRequest, ...grpc.CallOption) (*identityv1.TenantUserList, error) {
	return nil, a.err
}

func TestOnlyTransientFailuresMeanUnavailable(t *testing.T) {
	cases := []struct {
		code        codes.Code
		unavailable bool
	}{
		{codes.Unavailable, true},
		{codes.DeadlineExceeded, true},
		{codes.ResourceExhausted, true},
		{codes.Unauthenticated, false}, // a wrong service token is a deployment fault, not an outage
		{codes.Internal, false},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			_, err := NewDirectory(answering{err: status.Error(tc.code, "x")}).TenantUsers(context.Background(), "a", "t")
			if err == nil {
				t.Fatal("error swallowed")
			}
			if got := errors.Is(err, app.ErrUsersUnavailable); got != tc.unavailable {
				t.Fatalf("unavailable = %v, want %v (%v)", got, tc.unavailable, err)
			}
		})
	}
}
