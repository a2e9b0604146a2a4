package grpcapi_test

import (
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Internal teams calling identity's gRPC directly meet the sessions routes' rules, which identity's
// own access policy enforces: a read key or the user's own token lists, a write key or the user's
// own token revokes, anything of another app is not found.
func TestSessionRoutesHoldTheirRulesForDirectGRPCCallers(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	tok := e.signedIn(t, a, "grace@example.test")
	stranger := e.signedIn(t, a, "alan@example.test")
	me, err := e.identity.GetMe(ctxWith(t, bearer(tok)...), &identityv1.GetMeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	list := func(ctx []string, userID string) (*identityv1.SessionList, error) {
		return e.identity.ListSessions(ctxWith(t, ctx...), &identityv1.ListSessionsRequest{UserId: userID})
	}
	own, err := list(bearer(tok), "me")
	if err != nil || own.GetKind() != "session" || own.GetItemsLength() != 1 || !own.GetItems()[0].GetCurrent() ||
		own.GetItems()[0].GetClientIp() != "192.0.2.9" || own.GetItems()[0].GetAppId() != a.app.GetId() {
		t.Fatalf("own sessions = %v, %v", own, err)
	}
	sessionID := own.GetItems()[0].GetId()

	_, err = e.identity.ListSessions(a.ctx(t, "read"), &identityv1.ListSessionsRequest{UserId: me.GetId()})
	wantCode(t, "list with a read key", err, codes.OK)
	_, err = e.identity.ListSessions(a.ctx(t, "write"), &identityv1.ListSessionsRequest{UserId: me.GetId()})
	wantCode(t, "list with a write key", err, codes.PermissionDenied)
	_, err = list(bearer(stranger), me.GetId())
	wantCode(t, "list with another user's token", err, codes.PermissionDenied)
	_, err = e.identity.ListSessions(b.ctx(t, "read"), &identityv1.ListSessionsRequest{UserId: me.GetId()})
	wantCode(t, "list another app's user", err, codes.NotFound)
	_, err = list(nil, me.GetId())
	wantCode(t, "list without credentials", err, codes.Unauthenticated)

	revoke := func(ctx []string, userID, sessionID string) error {
		_, err := e.identity.RevokeSession(ctxWith(t, ctx...), &identityv1.RevokeSessionRequest{UserId: userID, SessionId: sessionID})
		return err
	}
	_, err = e.identity.RevokeSession(a.ctx(t, "read"), &identityv1.RevokeSessionRequest{UserId: me.GetId(), SessionId: sessionID})
	wantCode(t, "revoke with a read key", err, codes.PermissionDenied)
	wantCode(t, "revoke with another user's token", revoke(bearer(stranger), me.GetId(), sessionID), codes.PermissionDenied)
	_, err = e.identity.RevokeSession(b.ctx(t, "write"), &identityv1.RevokeSessionRequest{UserId: me.GetId(), SessionId: sessionID})
	wantCode(t, "revoke another app's session", err, codes.NotFound)
	wantCode(t, "revoke an unknown session", revoke(bearer(tok), "me", uuid.NewString()), codes.NotFound)
	wantCode(t, "revoke a malformed session id", revoke(bearer(tok), "me", "x"), codes.InvalidArgument)
	_, err = e.identity.RevokeSessions(b.ctx(t, "write"), &identityv1.RevokeSessionsRequest{UserId: me.GetId()})
	wantCode(t, "revoke all of another app's user", err, codes.NotFound)
	_, err = e.identity.RevokeSessions(ctxWith(t, bearer(stranger)...), &identityv1.RevokeSessionsRequest{UserId: me.GetId()})
	wantCode(t, "revoke all with another user's token", err, codes.PermissionDenied)

	// The user's own token ends its own session: its refresh token stops working.
	wantCode(t, "revoke the token's own session", revoke(bearer(tok), "me", sessionID), codes.OK)
	_, err = e.token.ExchangeToken(ctxWith(t), &identityv1.ExchangeTokenRequest{ClientId: a.app.GetId(), RefreshToken: tok.GetRefreshToken()})
	wantCode(t, "refresh in the revoked session", err, codes.InvalidArgument)
	_, err = e.identity.RevokeSessions(a.ctx(t, "write"), &identityv1.RevokeSessionsRequest{UserId: me.GetId()})
	wantCode(t, "revoke all with a write key, none left", err, codes.OK)
}
