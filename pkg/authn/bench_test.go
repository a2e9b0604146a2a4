package authn

import (
	"context"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"google.golang.org/grpc"
)

// benchIdentity answers VerifyApiKey like identity does for a known key.
type benchIdentity struct {
	identityv1.UnimplementedIdentityInternalServiceServer
}

func (benchIdentity) VerifyApiKey(_ context.Context, r *identityv1.VerifyApiKeyRequest) (*identityv1.VerifiedApiKey, error) {
	if r.GetApiKey() != "bench-key" {
		return nil, fault.Unauthenticated("invalid API key")
	}
	return &identityv1.VerifiedApiKey{KeyId: "k", AppId: r.GetClientId(), Type: "read", AppEnabled: true}, nil
}

// BenchmarkAPIKeyVerification measures what the key cache saves a service other than identity on
// every request: the baseline is the gRPC round trip to identity (in-process transport, so the
// real network makes the gap larger), the cached variant a cache hit.
func BenchmarkAPIKeyVerification(b *testing.B) {
	srv := grpc.NewServer()
	identityv1.RegisterIdentityInternalServiceServer(srv, benchIdentity{})
	conn := grpctest.Serve(b, srv)
	remote := NewRemoteVerifier(identityv1.NewIdentityInternalServiceClient(conn))
	ctx := context.Background()

	for _, v := range []struct {
		name     string
		verifier KeyVerifier
	}{
		{"baseline", remote},
		{"cached", NewKeyCache(remote, RemoteTTL)},
	} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := v.verifier.VerifyAPIKey(ctx, "bench-key", "app-1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
