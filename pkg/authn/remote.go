package authn

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"google.golang.org/grpc"
)

// RemoteTTL bounds how long a service other than identity trusts a cached verification when no
// event has evicted it first.
const RemoteTTL = 30 * time.Second

// Remote is how every service other than identity authenticates its callers: identity verifies API
// keys and tenant access tokens, the answers are cached briefly, and identity's key, app and user
// events evict them early.
type Remote struct {
	Keys   *KeyCache
	Tokens *TokenCache
}

// NewRemote verifies through identity over conn, whose calls must carry the service token.
func NewRemote(conn grpc.ClientConnInterface) Remote {
	client := identityv1.NewIdentityInternalServiceClient(conn)
	return Remote{
		Keys:   NewKeyCache(NewRemoteVerifier(client), RemoteTTL),
		Tokens: NewTokenCache(NewRemoteTokenVerifier(client), RemoteTTL),
	}
}

// Policy is the access policy of a service that verifies through identity.
func (r Remote) Policy(adminToken, serviceToken string) Policy {
	return Policy{Keys: r.Keys, Tokens: r.Tokens, AdminToken: adminToken, ServiceToken: serviceToken}
}

// Watch evicts cached keys and tokens on identity's events until ctx ends or stop is called.
func (r Remote) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	stopKeys, err := r.Keys.Watch(ctx, bus)
	if err != nil {
		return nil, err
	}
	stopTokens, err := r.Tokens.Watch(ctx, bus)
	if err != nil {
		stopKeys()
		return nil, err
	}
	return func() { stopTokens(); stopKeys() }, nil
}
