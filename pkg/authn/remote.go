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
// keys, tenant access tokens and project members' operator tokens, the answers are cached briefly,
// and identity's key, app and user events evict them early. Which project owns an app (operator
// routes) is asked once and kept, since it never changes.
type Remote struct {
	Keys      *KeyCache
	Tokens    *TokenCache
	Operators *OperatorCache
	Apps      *AppProjectCache
}

// NewRemote verifies through identity over conn, whose calls must carry the service token.
func NewRemote(conn grpc.ClientConnInterface) Remote {
	client := identityv1.NewIdentityInternalServiceClient(conn)
	return Remote{
		Keys:   NewKeyCache(NewRemoteVerifier(client), RemoteTTL),
		Tokens: NewTokenCache(NewRemoteTokenVerifier(client), RemoteTTL),
		// A console sign-out evicts the member's tokens (Watch); RemoteTTL alone bounds how long a
		// member removed from the project is still admitted here.
		Operators: NewOperatorCache(NewRemoteOperatorVerifier(client), RemoteTTL),
		Apps:      NewAppProjectCache(NewRemoteAppProjects(client), AppProjectTTL),
	}
}

// Policy is the access policy of a service that verifies through identity.
func (r Remote) Policy(adminToken, serviceToken string) Policy {
	return Policy{Keys: r.Keys, Tokens: r.Tokens, Operators: r.Operators, Apps: r.Apps, AdminToken: adminToken, ServiceToken: serviceToken}
}

// Watch evicts cached keys, tokens and operator tokens on identity's events until ctx ends or stop
// is called.
func (r Remote) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for _, watch := range []func(context.Context, events.Bus) (func(), error){r.Keys.Watch, r.Tokens.Watch, r.Operators.Watch} {
		stop, err := watch(ctx, bus)
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, stop)
	}
	return stopAll, nil
}
